//! `events.k8s.io/v1`.

pub(crate) mod event;
