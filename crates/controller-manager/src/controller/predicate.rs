//! Event filters (controller-runtime `pkg/predicate`).
//!
//! A [`Predicate`] decides, from object metadata, whether an event reaches
//! the controller's queue. Predicates given to
//! [`Builder::event_filter`](super::Builder::event_filter) apply to
//! every watch of the controller; an event passes only if every predicate
//! lets it through.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Filters events before they are queued (controller-runtime
/// `predicate.Predicate`). Each method defaults to letting the event pass.
///
/// A resync (an update whose old and new objects carry the same resource
/// version) is an update like any other here, so
/// [`generation_changed`] and [`resource_version_changed`] filter resyncs
/// out, as in controller-runtime.
pub trait Predicate: Send + Sync + 'static {
    /// An object was created (or listed).
    fn create(&self, obj: &ObjectMeta) -> bool {
        let _ = obj;
        true
    }

    /// An object was updated (or resynced).
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        let _ = (old, new);
        true
    }

    /// An object was deleted (`obj` may be only a name and namespace when
    /// the deletion was missed and its last state is unknown).
    fn delete(&self, obj: &ObjectMeta) -> bool {
        let _ = obj;
        true
    }
}

impl<P: Predicate + ?Sized> Predicate for Arc<P> {
    fn create(&self, obj: &ObjectMeta) -> bool {
        (**self).create(obj)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        (**self).update(old, new)
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        (**self).delete(obj)
    }
}

impl<P: Predicate + ?Sized> Predicate for Box<P> {
    fn create(&self, obj: &ObjectMeta) -> bool {
        (**self).create(obj)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        (**self).update(old, new)
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        (**self).delete(obj)
    }
}

/// Passes updates that change `metadata.generation` (that is, the spec),
/// and every create and delete (controller-runtime
/// `GenerationChangedPredicate`). Status-only updates and resyncs are
/// dropped.
pub fn generation_changed() -> GenerationChanged {
    GenerationChanged
}

/// See [`generation_changed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl Predicate for GenerationChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.generation != new.generation
    }
}

/// Passes updates that change `metadata.labels`, and every create and
/// delete (controller-runtime `LabelChangedPredicate`).
pub fn labels_changed() -> LabelsChanged {
    LabelsChanged
}

/// See [`labels_changed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl Predicate for LabelsChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        // An empty map and no map are the same labels.
        let empty = Default::default();
        old.labels.as_ref().unwrap_or(&empty) != new.labels.as_ref().unwrap_or(&empty)
    }
}

/// Passes updates that change `metadata.annotations`, and every create and
/// delete (controller-runtime `AnnotationChangedPredicate`).
pub fn annotations_changed() -> AnnotationsChanged {
    AnnotationsChanged
}

/// See [`annotations_changed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl Predicate for AnnotationsChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        let empty = Default::default();
        old.annotations.as_ref().unwrap_or(&empty) != new.annotations.as_ref().unwrap_or(&empty)
    }
}

/// Passes updates that change `metadata.resourceVersion` (drops resyncs),
/// and every create and delete (controller-runtime
/// `ResourceVersionChangedPredicate`).
pub fn resource_version_changed() -> ResourceVersionChanged {
    ResourceVersionChanged
}

/// See [`resource_version_changed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl Predicate for ResourceVersionChanged {
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        old.resource_version != new.resource_version
    }
}

type CreateFn = Box<dyn Fn(&ObjectMeta) -> bool + Send + Sync>;
type UpdateFn = Box<dyn Fn(&ObjectMeta, &ObjectMeta) -> bool + Send + Sync>;
type DeleteFn = CreateFn;

/// A predicate made of closures, any of them optional (controller-runtime
/// `predicate.Funcs`); an event without a closure passes.
///
/// ```
/// use kcr_controller_manager::controller::predicate::{Funcs, Predicate};
///
/// let only_labelled = Funcs::new()
///     .create_func(|meta| meta.labels.as_ref().is_some_and(|l| l.contains_key("app")));
/// assert!(!only_labelled.create(&Default::default()));
/// assert!(only_labelled.delete(&Default::default()));
/// ```
#[derive(Default)]
pub struct Funcs {
    create: Option<CreateFn>,
    update: Option<UpdateFn>,
    delete: Option<DeleteFn>,
}

impl fmt::Debug for Funcs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Funcs")
            .field("create", &self.create.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl Funcs {
    /// A predicate that passes everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides creates.
    #[must_use]
    pub fn create_func(mut self, f: impl Fn(&ObjectMeta) -> bool + Send + Sync + 'static) -> Self {
        self.create = Some(Box::new(f));
        self
    }

    /// Decides updates.
    #[must_use]
    pub fn update_func(
        mut self,
        f: impl Fn(&ObjectMeta, &ObjectMeta) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Decides deletes.
    #[must_use]
    pub fn delete_func(mut self, f: impl Fn(&ObjectMeta) -> bool + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl Predicate for Funcs {
    fn create(&self, obj: &ObjectMeta) -> bool {
        self.create.as_ref().is_none_or(|f| f(obj))
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.update.as_ref().is_none_or(|f| f(old, new))
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        self.delete.as_ref().is_none_or(|f| f(obj))
    }
}

/// Passes an event when every one of `predicates` does (controller-runtime
/// `predicate.And`).
pub fn and(predicates: Vec<Box<dyn Predicate>>) -> And {
    And(predicates)
}

/// See [`and`].
pub struct And(Vec<Box<dyn Predicate>>);

impl fmt::Debug for And {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("And").field(&self.0.len()).finish()
    }
}

impl Predicate for And {
    fn create(&self, obj: &ObjectMeta) -> bool {
        self.0.iter().all(|p| p.create(obj))
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.0.iter().all(|p| p.update(old, new))
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        self.0.iter().all(|p| p.delete(obj))
    }
}

/// Passes an event when any one of `predicates` does (controller-runtime
/// `predicate.Or`).
pub fn or(predicates: Vec<Box<dyn Predicate>>) -> Or {
    Or(predicates)
}

/// See [`or`].
pub struct Or(Vec<Box<dyn Predicate>>);

impl fmt::Debug for Or {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Or").field(&self.0.len()).finish()
    }
}

impl Predicate for Or {
    fn create(&self, obj: &ObjectMeta) -> bool {
        self.0.iter().any(|p| p.create(obj))
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        self.0.iter().any(|p| p.update(old, new))
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        self.0.iter().any(|p| p.delete(obj))
    }
}

/// Passes an event when `predicate` does not (controller-runtime
/// `predicate.Not`).
pub fn not<P: Predicate>(predicate: P) -> Not<P> {
    Not(predicate)
}

/// See [`not`].
#[derive(Debug)]
pub struct Not<P>(P);

impl<P: Predicate> Predicate for Not<P> {
    fn create(&self, obj: &ObjectMeta) -> bool {
        !self.0.create(obj)
    }
    fn update(&self, old: &ObjectMeta, new: &ObjectMeta) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, obj: &ObjectMeta) -> bool {
        !self.0.delete(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(
        generation: i64,
        rv: &str,
        label: Option<&str>,
        annotation: Option<&str>,
    ) -> ObjectMeta {
        ObjectMeta {
            generation: Some(generation),
            resource_version: Some(rv.to_owned()),
            labels: label.map(|v| [("app".to_owned(), v.to_owned())].into()),
            annotations: annotation.map(|v| [("note".to_owned(), v.to_owned())].into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn generation_changed_should_pass_only_spec_updates() {
        let p = generation_changed();
        assert!(p.update(&meta(1, "1", None, None), &meta(2, "2", None, None)));
        assert!(!p.update(&meta(1, "1", None, None), &meta(1, "2", Some("x"), None)));
        assert!(p.create(&meta(1, "1", None, None)));
        assert!(p.delete(&meta(1, "1", None, None)));
    }

    #[test]
    fn labels_changed_should_pass_only_label_updates() {
        let p = labels_changed();
        assert!(p.update(&meta(1, "1", None, None), &meta(1, "2", Some("a"), None)));
        assert!(p.update(
            &meta(1, "1", Some("a"), None),
            &meta(1, "2", Some("b"), None)
        ));
        assert!(!p.update(
            &meta(1, "1", Some("a"), None),
            &meta(2, "2", Some("a"), Some("n"))
        ));
        let mut empty = meta(1, "1", None, None);
        empty.labels = Some(Default::default());
        assert!(!p.update(&meta(1, "1", None, None), &empty));
    }

    #[test]
    fn annotations_changed_should_pass_only_annotation_updates() {
        let p = annotations_changed();
        assert!(p.update(&meta(1, "1", None, None), &meta(1, "2", None, Some("n"))));
        assert!(!p.update(
            &meta(1, "1", None, Some("n")),
            &meta(2, "2", Some("a"), Some("n"))
        ));
    }

    #[test]
    fn resource_version_changed_should_drop_resyncs() {
        let p = resource_version_changed();
        assert!(p.update(&meta(1, "1", None, None), &meta(1, "2", None, None)));
        assert!(!p.update(&meta(1, "7", None, None), &meta(1, "7", None, None)));
    }

    #[test]
    fn combinators_should_combine() {
        let both = and(vec![
            Box::new(generation_changed()),
            Box::new(labels_changed()),
        ]);
        let either = or(vec![
            Box::new(generation_changed()),
            Box::new(labels_changed()),
        ]);
        let (old, spec) = (meta(1, "1", None, None), meta(2, "2", None, None));
        assert!(!both.update(&old, &spec));
        assert!(either.update(&old, &spec));
        assert!(!not(generation_changed()).update(&old, &spec));
        assert!(!not(Funcs::new()).create(&old));
    }
}
