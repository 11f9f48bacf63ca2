//! Which pchannel to ask the new primary for: GetReplicateInfo answers only for the asked
//! cluster's own pchannels (upstream retries any other until the deadline), and a cluster's
//! pchannels are named after its cluster id, so the old primary's name of a pchannel (what
//! `--all-pchannels` reads from its configuration, or what an operator types) is mapped to the
//! new primary's by position, as CDC pairs them.
//!
//! Must never: guess a mapping the two clusters' lists do not both support (lists of different
//! lengths leave the name as given, whose failure is then explained).

use super::checkpoint::Milvus;

/// The pchannel to ask the new primary for `given` (a pchannel named by the operator or taken
/// from the old primary's configuration, so possibly the old primary's name of it):
/// GetReplicateInfo answers only for the asked cluster's own pchannels (upstream retries any
/// other until the deadline). `given` itself when the new primary has it or lists none; else
/// the new primary's pchannel at the position `given` has in the old primary's list (CDC pairs
/// the two clusters' pchannels by position); else `given` (whose failure is then explained).
pub fn pchannel_to_ask(given: &str, new_own: &[String], old_list: &[String]) -> String {
    if new_own.is_empty() || new_own.iter().any(|p| p == given) {
        return given.to_string();
    }
    old_list
        .iter()
        .position(|p| p == given)
        .filter(|_| old_list.len() == new_own.len())
        .and_then(|i| new_own.get(i))
        .map_or_else(|| given.to_string(), String::clone)
}

impl Milvus {
    /// The pchannels this cluster lists as its own in its replicate configuration (empty when
    /// it says nothing).
    pub(crate) async fn own_pchannels(&self) -> Vec<String> {
        let conf = self.replicate_configuration().await.ok();
        conf.as_ref()
            .and_then(|c| c.own_cluster(self.endpoint()))
            .map(|c| c.pchannels.clone())
            .unwrap_or_default()
    }

    /// The pchannels this cluster's configuration lists for `cluster`.
    pub(crate) async fn pchannels_of(&self, cluster: &str) -> Vec<String> {
        let conf = self.replicate_configuration().await.ok();
        conf.as_ref().and_then(|c| c.cluster(cluster)).map(|c| c.pchannels.clone()).unwrap_or_default()
    }
}
