//! The storage (`storage.k8s.io/v1`) kinds with rules of their own.

pub(crate) mod csi_driver;
pub(crate) mod storage_class;
