// Every operation lists a 4XX and a 5XX response, each carrying the Error
// schema as application/json (directly or through components/responses);
// the one exception is a bodiless 414 (see components/responses/UriTooLong).
const ERROR = "#/components/schemas/Error";

function resolve(doc, node) {
  while (node && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
    node = node.$ref
      .slice(2)
      .split("/")
      .reduce((at, key) => (at ? at[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), doc);
  }
  return node;
}

export default (operation, _options, context) => {
  const doc = context.document.data;
  const responses = (operation && operation.responses) || {};
  const problems = [];
  const codes = Object.keys(responses);
  for (const [family, label] of [["4", "4XX"], ["5", "5XX"]]) {
    if (!codes.some((code) => code.startsWith(family))) {
      problems.push({ message: `no ${label} response`, path: [...context.path, "responses"] });
    }
  }
  for (const code of codes.filter((c) => c.startsWith("4") || c.startsWith("5"))) {
    const response = resolve(doc, responses[code]);
    // 414 comes from the HTTP layer before any operation runs: no body to carry
    if (code === "414" && response && !response.content) continue;
    const media = response && response.content && response.content["application/json"];
    if (!media || !media.schema || media.schema.$ref !== ERROR) {
      problems.push({
        message: `response ${code} does not carry the Error schema as application/json`,
        path: [...context.path, "responses", code],
      });
    }
  }
  return problems;
};
