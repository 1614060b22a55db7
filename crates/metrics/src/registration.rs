//! How every family set of this crate is registered: all its collectors
//! against one registry, and once, lazily, against the default
//! [`registry()`](crate::registry) for its `global()` handle.

use std::sync::OnceLock;

use prometheus::Registry;
use prometheus::core::Collector;

use crate::Result;

/// Registers each of `collectors` against `registry`, in order; fails at the
/// first that is already registered there.
pub(crate) fn register_all(
    registry: &Registry,
    collectors: impl IntoIterator<Item = Box<dyn Collector>>,
) -> Result<()> {
    for collector in collectors {
        registry.register(collector)?;
    }
    Ok(())
}

/// The family set `register` builds, registered once (into `cell`) against
/// the default registry.
///
/// If that registration fails (some other code registered families with
/// these names there first), the families are registered against a registry
/// of their own instead: they still work but are not exported.
pub(crate) fn global<T>(
    cell: &'static OnceLock<T>,
    register: fn(&Registry) -> Result<T>,
    what: &str,
) -> &'static T {
    cell.get_or_init(|| match register(crate::registry()) {
        Ok(families) => families,
        Err(_) => match register(&Registry::new()) {
            Ok(families) => families,
            // The names and labels are constants that prometheus accepts.
            Err(e) => unreachable!("constant {what} families are valid: {e}"),
        },
    })
}

/// Registers clones of the listed families against a registry, in order
/// (`register!(registry, metrics.adds, metrics.depth)?`), through
/// [`register_all`].
macro_rules! register {
    ($registry:expr, $($family:expr),+ $(,)?) => {
        $crate::registration::register_all(
            $registry,
            [$(Box::new($family.clone()) as Box<dyn prometheus::core::Collector>),+],
        )
    };
}
pub(crate) use register;
