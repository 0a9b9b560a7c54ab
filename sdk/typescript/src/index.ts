// @adapt/sdk: the TypeScript SDK for adapt's sandbox API (Node >= 18, global fetch, no
// runtime dependencies).
export { Automations } from "./automations.js";
export type { CreateAutomationOptions, CreateControllerOptions } from "./automations.js";
export { Client } from "./client.js";
export { CommandHandle, Commands, PYTHON_MISSING } from "./commands.js";
export type { CommandOptions, OutputCallback, RunOptions, WaitOptions } from "./commands.js";
export * from "./errors.js";
export { Files } from "./files.js";
export type { FileData } from "./files.js";
export type * from "./models.js";
export { Accounts, Apps, Databases, Images, Jobs, Keys, Objects, Orgs, Plans, Runs, Secrets, Sites, StorageVolumes } from "./resources.js";
export type { DeployAppOptions, IdempotencyOptions, ImageWaitOptions, RollbackAppOptions, SubmitJobOptions } from "./resources.js";
export { Artifacts, ENDED, Endpoints, Sandbox, Sandboxes } from "./sandbox.js";
export type { CreateSandboxOptions } from "./sandbox.js";
export type { Body, ClientOptions } from "./transport.js";
