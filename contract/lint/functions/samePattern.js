// Every property of one name has one pattern: where any property called
// `msisdn` (or its array's items) has a pattern, every `msisdn` has that
// same pattern. `except` names the words that mean different things in
// different schemas (an error's `code` against a login `code`).
export default (doc, options, context) => {
  const except = new Set((options && options.except) || []);
  const seen = new Map(); // name -> Map(pattern or "(none)" -> first path)
  const walk = (node, path) => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, [...path, i]));
      return;
    }
    if (!node || typeof node !== "object") return;
    if (node.properties && typeof node.properties === "object") {
      for (const [name, prop] of Object.entries(node.properties)) {
        if (except.has(name) || !prop || typeof prop !== "object") continue;
        const shape = prop.type === "array" && prop.items ? prop.items : prop;
        // a property that names a shared schema carries that schema's pattern
        if (shape.$ref || shape.allOf) continue;
        const pattern = typeof shape.pattern === "string" ? shape.pattern : "(none)";
        if (!seen.has(name)) seen.set(name, new Map());
        if (!seen.get(name).has(pattern)) seen.get(name).set(pattern, [...path, "properties", name]);
      }
    }
    for (const [key, child] of Object.entries(node)) walk(child, [...path, key]);
  };
  walk(doc, []);
  const problems = [];
  for (const [name, patterns] of seen) {
    if (patterns.size < 2 || !([...patterns.keys()].some((p) => p !== "(none)"))) continue;
    const listed = [...patterns.keys()].join(" | ");
    for (const [, path] of patterns) {
      problems.push({ message: `property ${name} has different patterns: ${listed}`, path: [...context.path, ...path] });
    }
  }
  return problems;
};
