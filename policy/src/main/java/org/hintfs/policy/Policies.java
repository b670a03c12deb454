package org.hintfs.policy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/** The registry of cache policies by short name, as the CLI and control file select them. */
public final class Policies {
  private static final Map<String, Function<PolicyContext, CachePolicy>> REGISTRY =
      new LinkedHashMap<>();

  static {
    REGISTRY.put("auto", AutoPolicy::new);
    REGISTRY.put("lru", ctx -> new LruPolicy(ctx.samples()));
    REGISTRY.put("lfu", LfuPolicy::new);
    REGISTRY.put("static", StaticPolicy::new);
    REGISTRY.put("shade", ShadePolicy::new);
    REGISTRY.put("impact", ImpactPolicy::new);
    REGISTRY.put("clairvoyant", ClairvoyantPolicy::new);
  }

  private Policies() {}

  /** The registered names, in registration order. */
  public static java.util.Set<String> names() {
    return java.util.Collections.unmodifiableSet(REGISTRY.keySet());
  }

  /**
   * A new policy.
   *
   * @throws IllegalArgumentException naming the known policies if {@code name} is not one, or
   *     saying which hint a policy lacks
   */
  public static CachePolicy create(String name, PolicyContext ctx) {
    Function<PolicyContext, CachePolicy> f = REGISTRY.get(name);
    if (f == null) {
      throw new IllegalArgumentException(
          "unknown policy '" + name + "': choose one of " + String.join(", ", REGISTRY.keySet()));
    }
    return f.apply(ctx);
  }

  /** A new policy with no hints yet. */
  public static CachePolicy create(String name, int samples) {
    return create(name, PolicyContext.plain(samples));
  }
}
