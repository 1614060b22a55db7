//! kcr-testenv.
