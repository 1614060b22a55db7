//! `apiextensions.k8s.io/v1`.

pub(crate) mod custom_resource_definition;
