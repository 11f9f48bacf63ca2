//! Schemas by gRPC reflection from the demo (reflection on), and the error when it is off.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_off_is_a_clear_error() {
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let t = GrpcTransport::connect(&GrpcSettings::new(demo.addr().to_string())).await.unwrap();
    let err = reflection::load(&t, &mut SchemaSet::empty()).await.unwrap_err();
    assert!(matches!(err, ReflectionError::NotServed { .. }), "{err}");
    assert!(err.to_string().contains("does not serve gRPC reflection"), "{err}");
    demo.shutdown().await;
}
