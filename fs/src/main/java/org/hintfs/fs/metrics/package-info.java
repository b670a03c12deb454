/**
 * What a mount reports: {@link org.hintfs.fs.metrics.MountCounters}, every flat counter defined
 * once with its help text, and the two renderings of it, the {@code .hintfs/stats} JSON ({@link
 * org.hintfs.fs.metrics.StatsReport}, which {@code hintfs status} reads) and Prometheus ({@link
 * org.hintfs.fs.metrics.MetricsServer}).
 */
package org.hintfs.fs.metrics;
