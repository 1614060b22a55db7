//! kcr-workqueue.
