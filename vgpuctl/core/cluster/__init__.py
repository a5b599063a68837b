"""The cluster model: one faithful picture of a cluster, whether read live or from a snapshot file."""
