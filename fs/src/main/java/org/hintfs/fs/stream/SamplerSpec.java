package org.hintfs.fs.stream;

/**
 * The sampler a seed hint describes: this rank's order is a pure function of it and the epoch.
 *
 * @param sampler "distributed" (DistributedSampler) or "random" (DataLoader shuffle with a seeded
 *     generator)
 */
public record SamplerSpec(
    long seed, int world, int rank, String sampler, boolean dropLast, boolean persistentWorkers) {}
