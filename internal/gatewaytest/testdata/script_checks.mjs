// The helpers the SDK scripts of module/testdata share (node_sdk.mjs,
// ai_sdk.mjs); runNodeScriptWith copies this file beside the script.

// need is an environment variable the test sets.
export function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

export function assert(cond, what, got) {
  if (!cond) throw new Error(`${what}${got === undefined ? '' : `: got ${JSON.stringify(got)}`}`);
}

// checker returns check(name, fn): it runs fn, then lists name in checks
// and keeps what fn returned as summary[name]; an error names the check.
export function checker(checks, summary) {
  return async function check(name, fn) {
    try {
      const detail = await fn();
      checks.push(name);
      if (detail !== undefined) summary[name] = detail;
    } catch (err) {
      err.message = `${name}: ${err.message}`;
      throw err;
    }
  };
}
