//! The schemas compiled from `proto/` by build.rs and embedded in the binary, so walscope
//! starts with every built-in type and needs no protoc or proto files at run time.

use prost::Message;
use prost_types::{FileDescriptorProto, FileDescriptorSet};

/// The raw FileDescriptorSet bytes (also what `walscope schema export` writes).
pub const DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/builtin_descriptors.bin"));

pub fn files() -> Vec<FileDescriptorProto> {
    match FileDescriptorSet::decode(DESCRIPTOR_SET) {
        Ok(set) => set.file,
        Err(e) => panic!("embedded descriptor set does not decode (build defect): {e}"),
    }
}
