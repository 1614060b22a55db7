//! Code shared by kcr's examples.
