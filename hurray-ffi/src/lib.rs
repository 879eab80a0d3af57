//! Placeholder: built out by a later issue.
