//! kcr-controller-manager.
