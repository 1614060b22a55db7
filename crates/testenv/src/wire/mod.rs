//! The wire-level answers of kube-apiserver that come before a request reaches a resource's
//! rules: requests without credentials, content negotiation, and bodies that cannot be decoded,
//! with the messages a real server sends (several of them Go's `encoding/json` and `strconv`
//! wording).

pub(crate) mod anonymous;
pub(crate) mod continue_token;
pub(crate) mod decode_error;
pub(crate) mod difflib;
pub(crate) mod go_decode;
pub(crate) mod go_fields;
pub(crate) mod go_internal;
pub(crate) mod go_json;
pub(crate) mod go_nulls;
pub(crate) mod go_shape;
pub(crate) mod go_strconv;
pub(crate) mod go_types;
pub(crate) mod go_unmarshalers;
pub(crate) mod go_yaml;
pub(crate) mod labels_parser;
pub(crate) mod negotiation;
