//! Every way loading a schema can fail, each worded for an operator: what, where, what next.

use super::Origin;
use std::path::PathBuf;

#[derive(Debug, Clone, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "{importer}: import \"{import}\" not found{at}\n  searched: {}\n  fix: add the directory that contains \"{import}\" with --proto-path DIR",
        searched_list(searched)
    )]
    ImportNotFound { importer: String, import: String, at: String, searched: Vec<String> },

    #[error(
        "proto file \"{file}\" not found\n  searched: {}\n  fix: check the path, or add its directory with --proto-path DIR",
        searched_list(searched)
    )]
    ProtoNotFound { file: String, searched: Vec<String> },

    #[error("{file}:{line}:{column}: syntax error: {message}")]
    Syntax { file: String, line: usize, column: usize, message: String },

    #[error("{location}: {message}")]
    Invalid { location: String, message: String },

    /// An editions file walscope cannot read faithfully: the message names the edition and
    /// the feature, the location is file:line:column where known.
    #[error("{location}: {message}")]
    Editions { location: String, message: String },

    #[error(
        "duplicate symbol \"{symbol}\": defined in {first_file} ({first_origin}) and again, differently, in {second_file} ({second_origin})\n  differs: {difference}\n  fix: load only one of them, or give one a different package"
    )]
    DuplicateSymbol {
        symbol: String,
        first_file: String,
        first_origin: Box<Origin>,
        second_file: String,
        second_origin: Box<Origin>,
        difference: String,
    },

    #[error(
        "file \"{file}\" is loaded twice with different contents: from {first} and from {second}\n  fix: load only one version of it"
    )]
    ConflictingFile { file: String, first: Box<Origin>, second: Box<Origin> },

    #[error(
        "{origin}: \"{file}\" imports \"{dependency}\", which is neither in the set nor already loaded\n  fix: re-create the set with its imports (protoc --include_imports), or also load the schema that defines \"{dependency}\""
    )]
    MissingDependency { origin: Box<Origin>, file: String, dependency: String },

    #[error(
        "{path}: not a protobuf descriptor set ({reason})\n  fix: descriptor sets come from `protoc -o FILE --include_imports`; for .proto sources use --proto"
    )]
    NotADescriptorSet { path: PathBuf, reason: String },

    #[error("{path}: cannot read: {reason}")]
    Io { path: PathBuf, reason: String },

    #[error("unknown type \"{name}\"{hint}\n  see `walscope schema list` for every loaded type")]
    UnknownType { name: String, hint: String },

    #[error("{0}")]
    Other(String),
}

fn searched_list(s: &[String]) -> String {
    if s.is_empty() { "(no include paths)".into() } else { s.join(", ") }
}
