//! The timeouts and retries a send (and a token count) goes by: below the HTTP layer and the
//! sender, which both read them.

use std::time::Duration;

use crate::connection::Connection;

/// Timeouts and retries of one send.
///
/// | setting | default |
/// |---|---|
/// | `connect_timeout`: opening the connection (TCP and TLS) | 10 s |
/// | `first_byte_timeout`: from sending the request to the reply's status and headers | 60 s |
/// | `idle_timeout`: between two parts of the reply's body, and before the first | 60 s |
/// | `total_timeout`: the whole send (or count), retries and waits included | 10 min |
/// | `max_retries`: further attempts after a 429 or 5xx status | 2 |
/// | `max_retry_wait`: the longest wait before a retry | 20 s |
///
/// A retry waits as long as the provider's `Retry-After` header asks (in seconds); when it asks
/// for longer than `max_retry_wait`, there is no retry and its status is the error. Without the
/// header the waits are 1 s, then 2 s (never more than `max_retry_wait`). A retry only ever
/// happens before any of the reply was read, so nothing is streamed twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendOptions {
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    /// A server that drips a byte now and then never runs out `idle_timeout`; this ends it.
    pub total_timeout: Duration,
    pub max_retries: u32,
    pub max_retry_wait: Duration,
}

impl Default for SendOptions {
    fn default() -> Self {
        SendOptions {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            total_timeout: Duration::from_secs(600),
            max_retries: 2,
            max_retry_wait: Duration::from_secs(20),
        }
    }
}

impl SendOptions {
    /// The defaults with what `connection` sets in its [`Timeouts`] in their place.
    pub fn for_connection(connection: &Connection) -> SendOptions {
        let t = &connection.timeouts;
        let secs = |set: Option<u32>, default: Duration| {
            set.map_or(default, |s| Duration::from_secs(u64::from(s)))
        };
        let d = SendOptions::default();
        SendOptions {
            connect_timeout: secs(t.connect_secs, d.connect_timeout),
            first_byte_timeout: secs(t.first_byte_secs, d.first_byte_timeout),
            idle_timeout: secs(t.idle_secs, d.idle_timeout),
            total_timeout: secs(t.total_secs, d.total_timeout),
            ..d
        }
    }
}
