//! kcr-testenv's integration tests, one binary with a module per area: linked once instead of
//! once per area (29 binaries before), which roughly halved the rebuild of
//! `cargo test -p kcr-testenv --no-run` after a change to the crate. Each module is named after
//! what it tests; `common` holds the raw HTTP client and builders they share.

mod common;

mod admission;
mod api_conventions;
mod api_resources;
mod bad_input;
mod client_round_trips;
mod component_statuses;
mod conformance;
mod crd_rules_and_managed_fields;
mod custom_resources;
mod decode;
mod defaulting;
mod event_conversion;
mod faults;
mod garbage_collection;
mod kind_validation;
mod kubectl;
mod mutating_policy;
mod namespaces;
mod nulls;
mod params;
mod pod_logs;
mod pod_validation;
mod protobuf;
mod protobuf_encoder;
mod rbac;
mod request_errors;
mod reviews;
mod robustness;
mod server_side_apply;
mod sharding;
mod ssa_patch_corpus;
mod startup;
mod stateful_set_and_job_controllers;
mod subresources;
mod tls;
mod update_validation;
mod watch;
mod watch_cache;
mod wire;
mod wire_details;
mod workload_controllers;
