// The scenario of `cargo xtask clients` through openapi-fetch, typed by the
// schema.d.ts openapi-typescript generates from a revision's document (the
// xtask copies this file next to it, compiles it with tsc --strict and runs
// it with node): create a customer with an idempotency key, replay it, read
// it, find it in the list, miss an unknown one (404, the Error type), read
// the catalog's offerings and one of them, list the users. openapi-fetch
// does not validate at run time, so each answer's status is checked and
// the fields read are checked to be there.
//
// Environment: SWITCHBOARD_URL (…/api/v2), SWITCHBOARD_KEY, SWITCHBOARD_REVISION.

import createClient from "openapi-fetch";
import { randomUUID } from "node:crypto";
import type { components, paths } from "./schema.js";

type Customer = components["schemas"]["Customer"];
type ApiError = components["schemas"]["Error"];

const revision = env("SWITCHBOARD_REVISION");
const client = createClient<paths>({
  baseUrl: env("SWITCHBOARD_URL"),
  headers: { "X-Api-Key": env("SWITCHBOARD_KEY"), "Api-Revision": revision },
});

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The status and revision of an answer, and its body. */
function check(what: string, response: Response, status: number, body: unknown): void {
  if (response.status !== status) {
    throw new Error(`${what}: status ${response.status}, wanted ${status}: ${JSON.stringify(body)}`);
  }
  if (response.headers.get("Api-Revision") !== revision) {
    throw new Error(`${what}: answered in revision ${response.headers.get("Api-Revision")}, asked ${revision}`);
  }
  if (body === undefined) throw new Error(`${what}: no body`);
  console.error(`   ${what}: ${status}`);
}

/** A success's body, typed as its operation's answer. */
function ok<T>(what: string, answer: { data?: T; response: Response }, status: number): T {
  check(what, answer.response, status, answer.data);
  return answer.data as T;
}

/** A refusal's body, typed as its operation's error answer. */
function refused<E>(what: string, answer: { error?: E; response: Response }, status: number): E {
  check(what, answer.response, status, answer.error);
  return answer.error as E;
}

function customer(what: string, c: Customer): Customer {
  if (typeof c.customerId !== "string" || typeof c.name !== "string") throw new Error(`${what}: not a Customer`);
  return c;
}

const name = `Clients check, openapi-fetch ${randomUUID()}`;
const body: components["schemas"]["CreateCustomerRequest"] = {
  customerType: "CONSUMER",
  name,
  contact: { email: "clients-check@example.com" },
};
const key = randomUUID();
const idempotent = { params: { header: { "X-Idempotency-Key": key } }, body };
const created = customer("POST /customers", ok("POST /customers", await client.POST("/customers", idempotent), 201));
const again = await client.POST("/customers", idempotent);
const replayed = customer("POST /customers again", ok("POST /customers again, same key", again, 201));
if (replayed.customerId !== created.customerId || again.response.headers.get("Idempotent-Replayed") !== "true") {
  throw new Error("the retry was not a replay of the first answer");
}

const byId = { params: { path: { customerId: created.customerId } } };
const viewed = customer("GET /customers/{id}", ok("GET /customers/{id}", await client.GET("/customers/{customerId}", byId), 200));
if (viewed.name !== name) throw new Error(`GET /customers/{id}: name ${viewed.name}, wanted ${name}`);

let cursor: string | undefined;
let found = false;
for (;;) {
  const page = ok("GET /customers", await client.GET("/customers", { params: { query: { cursor } } }), 200);
  found ||= page.items.some((c) => c.customerId === created.customerId);
  cursor = page.pagination.nextCursor ?? undefined;
  if (found || cursor === undefined) break;
}
if (!found) throw new Error("GET /customers: the new customer is in no page");

const unknown = await client.GET("/customers/{customerId}", { params: { path: { customerId: "rid_no-such-customer" } } });
const missing: ApiError = refused("GET /customers/{unknown}", unknown, 404);
if (missing.internalCode !== "customer_not_found" || !missing.message || !missing.code || !missing.traceId) {
  throw new Error(`GET /customers/{unknown}: not the Error wanted: ${JSON.stringify(missing)}`);
}

const offerings = ok("GET /product-offerings", await client.GET("/product-offerings"), 200);
const listed = offerings.items[0];
if (listed === undefined) throw new Error("GET /product-offerings: the demo catalog is empty");
const one = ok(
  "GET /product-offerings/{id}",
  await client.GET("/product-offerings/{productOfferingId}", { params: { path: { productOfferingId: listed.productOfferingId } } }),
  200,
);
if (one.name !== listed.name) throw new Error("GET /product-offerings/{id}: not the offering listed");

const users = ok("GET /users", await client.GET("/users"), 200);
if (users.items.length === 0) throw new Error("GET /users: the demo has users");
