// The client: one adaptd URL and API key, and the organization's resources under it.
import { Automations } from "./automations.js";
import { Accounts, Apps, Databases, Images, Jobs, Keys, Objects, Orgs, Plans, Runs, Secrets, Sites, StorageVolumes } from "./resources.js";
import { Sandboxes } from "./sandbox.js";
import { Transport, type ClientOptions } from "./transport.js";

/** `new Client()` reads ADAPT_URL and ADAPT_API_KEY; options override them. */
export class Client {
  readonly transport: Transport;
  readonly sandboxes: Sandboxes;
  readonly images: Images;
  readonly secrets: Secrets;
  readonly database: Databases;
  readonly jobs: Jobs;
  readonly apps: Apps;
  readonly runs: Runs;
  readonly automations: Automations;
  readonly storage: StorageVolumes;
  readonly objects: Objects;
  readonly sites: Sites;
  readonly orgs: Orgs;
  readonly keys: Keys;
  readonly account: Accounts;
  readonly plans: Plans;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options);
    this.sandboxes = new Sandboxes(this);
    this.images = new Images(this.transport);
    this.secrets = new Secrets(this.transport);
    this.database = new Databases(this.transport);
    this.jobs = new Jobs(this.transport);
    this.apps = new Apps(this.transport);
    this.runs = new Runs(this.transport);
    this.automations = new Automations(this.transport);
    this.storage = new StorageVolumes(this.transport);
    this.objects = new Objects(this.transport);
    this.sites = new Sites(this.transport);
    this.orgs = new Orgs(this.transport);
    this.keys = new Keys(this.transport);
    this.account = new Accounts(this.transport);
    this.plans = new Plans(this.transport);
  }

  get url(): string {
    return this.transport.url;
  }

  /** True when adaptd answers /healthz with status ok (no key needed). */
  async health(): Promise<boolean> {
    const data = await this.transport.call<{ status?: unknown } | undefined>("GET", "/healthz");
    return data?.status === "ok";
  }

  /** Prometheus text metrics: balances, usage, limits and sandboxes (admin key). */
  async metrics(): Promise<string> {
    const resp = await this.transport.request("GET", "/metrics", { headers: { Accept: "text/plain" } });
    return resp.text();
  }

  /** The GPU types new GPU sandboxes can have ({ items, nextCursor, explanation }); empty on a
   * host without GPU passthrough, with the reason. */
  gpuTypes(): Promise<Record<string, unknown>> {
    return this.transport.call("GET", "/v1/gpu-types");
  }

  /** The environment aliases and image sources this adaptd accepts. */
  environments(): Promise<Record<string, unknown>> {
    return this.transport.call("GET", "/v1/environments");
  }
}
