//! The core (`v1`) kinds with rules of their own.

pub(crate) mod config_map;
pub(crate) mod endpoints;
pub(crate) mod limit_range;
pub(crate) mod namespace;
pub(crate) mod persistent_volume;
pub(crate) mod persistent_volume_claim;
pub(crate) mod pod;
pub(crate) mod pod_template;
pub(crate) mod replication_controller;
pub(crate) mod resource_quota;
pub(crate) mod secret;
pub(crate) mod service;
