//! Schemas by gRPC reflection from the demo (reflection on), the error when it is off, and a
//! server whose reflection serves files that do not hold together (a missing import, a broken type).

use walscope::net::grpc::{GrpcSettings, GrpcTransport};
use walscope::net::reflection::{self, ReflectionError};
use walscope::schema::{Origin, SchemaSet};
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_loads_services_and_every_import() {
    let demo = MilvusDemo::start(MilvusDemoConfig { reflection: true, ..Default::default() }).await.unwrap();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let mut set = SchemaSet::empty();
    let services = reflection::load(&t, &mut set).await.unwrap();
    assert!(services.iter().any(|s| s == "milvus.proto.milvus.MilvusService"), "{services:?}");
    // The response type lives in milvus.proto but needs common.proto: fetched by file name.
    assert!(set.message("milvus.proto.milvus.DumpMessagesResponse").is_ok());
    assert!(set.message("milvus.proto.common.ImmutableMessage").is_ok());
    let common =
        set.message("milvus.proto.common.ImmutableMessage").unwrap().parent_file().name().to_string();
    assert!(matches!(set.origin_of_file(&common), Some(Origin::Reflection(_))), "{common}");
    demo.shutdown().await;
}

/// A server with only the older `grpc.reflection.v1alpha` (built before v1 existed): the load
/// falls back to it and gets the same services and files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_falls_back_to_v1alpha() {
    let config = MilvusDemoConfig { reflection: true, reflection_v1alpha_only: true, ..Default::default() };
    let demo = MilvusDemo::start(config).await.unwrap();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let mut set = SchemaSet::empty();
    let services = reflection::load(&t, &mut set).await.unwrap();
    assert!(services.iter().any(|s| s == "milvus.proto.milvus.MilvusService"), "{services:?}");
    assert!(set.message("milvus.proto.common.ImmutableMessage").is_ok());
    // The server really lacks v1: a v1 client is told UNIMPLEMENTED.
    let mut v1 = tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient::new(t.channel());
    let ask = tonic_reflection::pb::v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            tonic_reflection::pb::v1::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let status = match v1.server_reflection_info(tokio_stream::iter(vec![ask])).await {
        Err(s) => s,
        Ok(mut r) => r.get_mut().message().await.expect_err("no v1 answers"),
    };
    assert_eq!(status.code(), tonic::Code::Unimplemented, "{status}");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_off_is_a_clear_error() {
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let err = reflection::load(&t, &mut SchemaSet::empty()).await.unwrap_err();
    assert!(matches!(err, ReflectionError::NotServed { .. }), "{err}");
    assert!(err.to_string().contains("does not serve gRPC reflection"), "{err}");
    demo.shutdown().await;
}

/// A server that serves the upstream-layout Milvus schemas by reflection: merged into the
/// built-ins, the server's definitions win, the built-in files they replace are set aside and
/// the WAL types re-link to the server's, with no notice to give (the fixtures keep every field).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_of_the_upstream_schema_coexists_with_the_builtins() {
    use prost::Message;
    use walscope::schema::{BuiltinUse, SetAsideReason};
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/milvus-upstream");
    let mut c = protox::Compiler::new([&fixtures]).unwrap();
    c.include_imports(true);
    c.open_file("milvus.proto").unwrap();
    let served = c.file_descriptor_set().encode_to_vec();
    let config =
        MilvusDemoConfig { reflection: true, reflection_schemas: Some(served), ..Default::default() };
    let demo = MilvusDemo::start(config).await.unwrap();
    let endpoint = demo.addr().to_string();
    let t = GrpcTransport::connect(&GrpcSettings::new(&endpoint)).await.unwrap();
    let mut set = SchemaSet::builtin();
    reflection::load(&t, &mut set).await.unwrap();
    assert!(set.notices().is_empty(), "{:?}", set.notices());
    let common = set.builtin_files().iter().find(|f| f.file == "milvus/common.proto").unwrap();
    match &common.status {
        BuiltinUse::SetAside(SetAsideReason::Replaced { by }) => {
            assert!(
                by.contains(&("common.proto".to_string(), Origin::Reflection(endpoint.clone()))),
                "{by:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    let messages = set.builtin_files().iter().find(|f| f.file == "milvus/messages.proto").unwrap();
    assert!(matches!(messages.status, BuiltinUse::Relinked { .. }), "{:?}", messages.status);
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    assert!(svc.methods().any(|m| m.name() == "ShowCollections"));
    set.message("milvus.proto.messages.InsertMessageHeader").unwrap();
    // Fetching again from the same server changes nothing (identical definitions merge).
    let before = set.symbols().len();
    reflection::load(&t, &mut set).await.unwrap();
    assert_eq!(set.symbols().len(), before);
    demo.shutdown().await;
}

/// The served files of the built-in schemas, to break on purpose.
fn builtin_files() -> prost_types::FileDescriptorSet {
    use prost::Message;
    prost_types::FileDescriptorSet::decode(walscope::schema::builtin_descriptor_set()).unwrap()
}

async fn load_from(served: prost_types::FileDescriptorSet) -> ReflectionError {
    use prost::Message;
    let config = MilvusDemoConfig {
        reflection: true,
        reflection_schemas: Some(served.encode_to_vec()),
        ..Default::default()
    };
    let demo = MilvusDemo::start(config).await.unwrap();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let err = reflection::load(&t, &mut SchemaSet::empty()).await.unwrap_err();
    demo.shutdown().await;
    err
}

/// A server whose reflection lists a file's import but cannot serve it: the load stops and
/// names the file, the one that imports it, and the server's own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_missing_an_import_is_named() {
    let mut set = builtin_files();
    let gone = "milvus/common.proto";
    assert!(set.file.iter().any(|f| f.name() == gone), "the built-ins hold {gone}");
    set.file.retain(|f| f.name() != gone);
    let err = load_from(set).await;
    match &err {
        ReflectionError::MissingDependency { file, needed_by, .. } => {
            assert_eq!(file, gone);
            assert!(!needed_by.is_empty());
        }
        other => panic!("{other}"),
    }
    let text = err.to_string();
    assert!(text.contains("cannot provide milvus/common.proto, imported by"), "{text}");
}

/// A server whose reflection serves a file that does not hold together (a field of a type no
/// file defines): a schema error that names the field and the type, and nothing is half-loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_of_a_broken_file_is_explained() {
    let mut set = builtin_files();
    let milvus = set.file.iter_mut().find(|f| f.name() == "milvus/milvus.proto").unwrap();
    let msg = milvus.message_type.iter_mut().find(|m| m.name() == "DumpMessagesResponse").unwrap();
    let field = msg.field.iter_mut().find(|f| f.name() == "message").unwrap();
    field.type_name = Some(".milvus.proto.common.NoSuchMessage".into());
    let err = load_from(set).await;
    assert!(matches!(err, ReflectionError::Schema(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("NoSuchMessage"), "{text}");
}
