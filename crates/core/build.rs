//! Compiles every `.proto` under the workspace's `proto/` into one FileDescriptorSet with protox (no protoc
//! needed) and leaves it in OUT_DIR for `schema::builtin` to embed.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    // The built-in schemas stay at the top of the repository, where a newcomer looks.
    let proto_dir = root.join("../../proto");
    println!("cargo:rerun-if-changed={}", proto_dir.display());
    let mut files = Vec::new();
    collect(&proto_dir, &mut files);
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let mut compiler = protox::Compiler::new([&proto_dir]).expect("include path");
    compiler.include_imports(true).include_source_info(false);
    for f in &files {
        if let Err(e) = compiler.open_file(f) {
            panic!("built-in schema {} does not compile: {e:?}", f.display());
        }
    }
    let bytes = compiler.encode_file_descriptor_set();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this"));
    std::fs::write(out.join("builtin_descriptors.bin"), bytes).expect("write descriptor set");
}
