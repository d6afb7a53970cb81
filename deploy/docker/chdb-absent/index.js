// Stand-in for the `chdb` package in agentgov's container images, which leave the embedded ClickHouse
// out (its native library is over 500 MB). The control plane imports chdb when it loads; this module
// lets that import succeed and fails only if the embedded engine is used, i.e. without CLICKHOUSE_URL.
/* global module */
"use strict";

const MESSAGE = "the embedded ClickHouse (chDB) is not part of this image: set CLICKHOUSE_URL to a ClickHouse server";

class Session {
  constructor() {
    throw new Error(MESSAGE);
  }
}

function drainPending() {}

module.exports = { Session, drainPending };
