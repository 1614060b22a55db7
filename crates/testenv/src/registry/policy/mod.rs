//! The policy (`policy/v1`) kinds with rules of their own.

pub(crate) mod pod_disruption_budget;
