//! The discovery (`discovery.k8s.io/v1`) kinds with rules of their own.

pub(crate) mod endpoint_slice;
