package org.hintfs.policy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntFunction;

/** The registry of cache policies by short name, as the CLI and control file select them. */
public final class Policies {
  private static final Map<String, IntFunction<CachePolicy>> REGISTRY = new LinkedHashMap<>();

  static {
    REGISTRY.put("lru", LruPolicy::new);
  }

  private Policies() {}

  /** The registered names, in registration order. */
  public static java.util.Set<String> names() {
    return java.util.Collections.unmodifiableSet(REGISTRY.keySet());
  }

  /**
   * A new policy over {@code samples} ids.
   *
   * @throws IllegalArgumentException naming the known policies if {@code name} is not one
   */
  public static CachePolicy create(String name, int samples) {
    IntFunction<CachePolicy> f = REGISTRY.get(name);
    if (f == null) {
      throw new IllegalArgumentException(
          "unknown policy '" + name + "': choose one of " + String.join(", ", REGISTRY.keySet()));
    }
    return f.apply(samples);
  }
}
