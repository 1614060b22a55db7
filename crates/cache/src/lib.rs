//! kcr-cache.
