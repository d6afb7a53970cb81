// Real services from testcontainers, used by `npm test` when a Docker engine answers and neither
// DATABASE_URL nor CLICKHOUSE_URL is set. (This machine and CI have no Docker engine: there the run
// falls back to the embedded engines, see test/run.ts.)
import type { StartedTestContainer } from "testcontainers";

export interface ContainerServices {
  databaseUrl: string;
  clickhouseUrl?: string;
  stop(): Promise<void>;
}

export async function startContainers(opts: { clickhouse: boolean }): Promise<ContainerServices> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const started: StartedTestContainer[] = [];
  const pg = await new GenericContainer("postgres:17-alpine")
    .withEnvironment({ POSTGRES_PASSWORD: "agentgov", POSTGRES_DB: "agentgov" })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  started.push(pg);
  const databaseUrl = `postgres://postgres:agentgov@${pg.getHost()}:${pg.getMappedPort(5432)}/agentgov`;
  let clickhouseUrl: string | undefined;
  if (opts.clickhouse) {
    const ch = await new GenericContainer("clickhouse/clickhouse-server:25.8")
      .withEnvironment({ CLICKHOUSE_SKIP_USER_SETUP: "1" })
      .withExposedPorts(8123)
      .withWaitStrategy(Wait.forHttp("/ping", 8123))
      .start();
    started.push(ch);
    clickhouseUrl = `http://${ch.getHost()}:${ch.getMappedPort(8123)}`;
  }
  return {
    databaseUrl,
    clickhouseUrl,
    async stop() {
      for (const c of started.reverse()) await c.stop().catch(() => undefined);
    },
  };
}
