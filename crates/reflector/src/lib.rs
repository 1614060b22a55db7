//! kcr-reflector.
