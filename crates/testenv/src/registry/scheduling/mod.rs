//! The scheduling (`scheduling.k8s.io/v1`) kinds with rules of their own.

pub(crate) mod priority_class;
