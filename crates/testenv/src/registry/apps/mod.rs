//! The `apps/v1` workloads.

pub(crate) mod workload;
