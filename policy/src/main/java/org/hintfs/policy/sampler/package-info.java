/**
 * A bit-exact replay of PyTorch's CPU sampling: its MT19937 generator, {@code randperm}, {@code
 * DistributedSampler}, and {@code RandomSampler} as a {@code DataLoader} drives it, so a seed hint
 * tells the mount the exact order a trainer will read in.
 */
package org.hintfs.policy.sampler;
