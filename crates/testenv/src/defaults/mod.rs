//! Defaulting shared by several kinds, as kube-apiserver's `pkg/apis/core/v1/defaults.go`: pod
//! specs and templates ([`pod`], used by Pods and every workload), the JSON helpers
//! ([`json`]). A kind's own
//! defaults are in its strategy (`registry/<group>/<kind>.rs`), which the generic store calls.
//!
//! The order matters for `managedFields`. kube-apiserver defaults an object when it decodes
//! the request, before the field manager records the write, so the manager owns the defaulted
//! fields (the strategy's `defaults`). The registry's strategy (`PrepareForCreate` / `PrepareForUpdate`) and
//! the allocators run after the field manager, so nobody owns what they set
//! (the strategy's `prepare_for_create` and `prepare_for_update`).

pub(crate) mod json;
pub(crate) mod pod;
