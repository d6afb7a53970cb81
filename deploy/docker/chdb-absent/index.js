// Stand-in for the `chdb` package in agentgov's container images, which leave the embedded ClickHouse
// out (its native library is over 500 MB). The control plane loads chdb only when CLICKHOUSE_URL is not
// set; this stand-in turns that mistake into an error that says what to do, instead of "Cannot find
// package 'chdb'".
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
