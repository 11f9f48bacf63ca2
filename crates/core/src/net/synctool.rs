//! One SyncTool client: TaskStatus, CreateSyncTask, DeleteSyncTask and `clear_all` over any
//! [`Transport`] (brpc baidu_std or HTTP/JSON), with SyncTool's refusals (a `GeneralResponse`
//! with a non-zero code, in or as the reply: [`crate::datasync::calls::refusal`]) turned into
//! typed errors, and the replies read into rows by [`crate::datasync::status`]. The CLI's
//! `tasks`, the sync-task poller and the app's dashboard all call SyncTool through this.
//!
//! Must never: send `clear_all` except from [`SyncToolClient::clear_all`] (it deletes every
//! task), send the delete RPC under the released proto's typo (the transports send
//! `DeleteSyncTask` either way), or retry a create or a delete.

use crate::datasync::status::{SubTaskRow, rows};
use crate::datasync::{SyncMode, TaskChange};
use crate::net::{CallOptions, NetError, Transport};
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage, Value};
use std::sync::Arc;

#[derive(Debug, Clone, thiserror::Error)]
pub enum SyncToolError {
    /// The call did not get an answer (connection, protocol, deadline, brpc error code).
    #[error("{method} on {endpoint}: {source}")]
    Transport {
        method: &'static str,
        endpoint: String,
        #[source]
        source: Box<NetError>,
    },
    /// SyncTool answered and said no.
    #[error("{method} refused by SyncTool (code {code}): {msg}")]
    Refused { method: &'static str, code: i32, msg: String },
    /// The loaded schemas cannot express the call.
    #[error("{0}")]
    Schema(String),
}

impl SyncToolError {
    /// The failure kind of a transport error (for words and next steps); None for a refusal.
    pub fn kind(&self) -> Option<crate::net::FailureKind> {
        match self {
            SyncToolError::Transport { source, .. } => Some(source.kind()),
            _ => None,
        }
    }
}

pub struct SyncToolClient {
    transport: Arc<dyn Transport>,
    opts: CallOptions,
}

impl SyncToolClient {
    /// `opts` goes with every call (its timeout above all; HTTP/JSON sends its metadata as headers, brpc refuses any).
    pub fn new(transport: Arc<dyn Transport>, opts: CallOptions) -> SyncToolClient {
        SyncToolClient { transport, opts }
    }

    pub fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }

    /// Every sub-task as a row (sorted by tid, pid), and the reply itself.
    pub async fn task_status(&self) -> Result<(Vec<SubTaskRow>, DynamicMessage), SyncToolError> {
        let reply = self.call("TaskStatus", |_| Ok(())).await?;
        Ok((rows(&reply), reply))
    }

    /// Creates the sync task of one table. `start_ts` (ms) is for [`SyncMode::IncrementalByTimestamp`].
    pub async fn create_sync_task(
        &self,
        db: &str,
        table: &str,
        mode: SyncMode,
        start_ts: Option<u64>,
        dest: &str,
    ) -> Result<(), SyncToolError> {
        self.call("CreateSyncTask", |m| {
            set(m, "db", Value::String(db.into()))?;
            set(m, "name", Value::String(table.into()))?;
            set(m, "mode", Value::EnumNumber(mode as i32))?;
            if let Some(ts) = start_ts {
                set(m, "start_ts", Value::U64(ts))?;
            }
            set(m, "dest", Value::String(dest.into()))
        })
        .await
        .map(drop)
    }

    /// Deletes a table's sync task (inside SyncTool; collectors stop on their next batch).
    pub async fn delete_sync_task(&self, db: &str, table: &str) -> Result<(), SyncToolError> {
        self.call("DeleteSyncTask", |m| {
            set(m, "db", Value::String(db.into()))?;
            set(m, "name", Value::String(table.into()))
        })
        .await
        .map(drop)
    }

    /// DESTRUCTIVE: makes SyncTool delete every task (TaskStatus with `clear_all`).
    pub async fn clear_all(&self) -> Result<(), SyncToolError> {
        self.call("TaskStatus", |m| set(m, "clear_all", Value::Bool(true))).await.map(drop)
    }

    /// Sends one typed change through the method above that makes it (`ClearAll` only through
    /// [`SyncToolClient::clear_all`]).
    pub async fn change(&self, change: &TaskChange) -> Result<(), SyncToolError> {
        match change {
            TaskChange::Create { db, table, mode, start_ts, dest } => {
                self.create_sync_task(db, table, *mode, *start_ts, dest).await
            }
            TaskChange::Delete { db, table } => self.delete_sync_task(db, table).await,
            TaskChange::ClearAll => self.clear_all().await,
        }
    }

    async fn call(
        &self,
        method: &'static str,
        fill: impl FnOnce(&mut DynamicMessage) -> Result<(), SyncToolError>,
    ) -> Result<DynamicMessage, SyncToolError> {
        let m: MethodDescriptor = crate::datasync::synctool_method(method).map_err(SyncToolError::Schema)?;
        let mut req = DynamicMessage::new(m.input());
        fill(&mut req)?;
        let reply = self.transport.call_unary(&m, &req, &self.opts).await.map_err(|source| {
            SyncToolError::Transport {
                method,
                endpoint: self.transport.endpoint().to_string(),
                source: Box::new(source),
            }
        })?;
        refusal(method, &reply.message)?;
        Ok(reply.message)
    }
}

fn set(m: &mut DynamicMessage, field: &str, v: Value) -> Result<(), SyncToolError> {
    let name = m.descriptor().full_name().to_string();
    m.try_set_field_by_name(field, v).map_err(|e| SyncToolError::Schema(format!("{name}.{field}: {e}")))
}

/// A `GeneralResponse` with a non-zero code, as the reply or as its `response` field.
fn refusal(method: &'static str, reply: &DynamicMessage) -> Result<(), SyncToolError> {
    match crate::datasync::calls::refusal(reply) {
        Some((code, msg)) => Err(SyncToolError::Refused { method, code, msg }),
        None => Ok(()),
    }
}
