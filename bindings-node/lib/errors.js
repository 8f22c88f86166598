'use strict'
// Errors shaped like the core's: an `Error` with the stable `code` and the `field` it names. The
// addon throws the core's own; these are for what only JavaScript can see (a value of the wrong
// kind where the addon expects an object or a callback).

/** An `Error` with `code` and `field`, its message starting with the field. */
function typedError(code, field, detail) {
  const e = new Error(`${field}: ${detail}`)
  e.code = code
  e.field = field
  return e
}

/** An `invalid_type` error: `field` should be `expected`. */
function invalidType(field, expected, value) {
  const got = value === null ? 'null' : typeof value
  return typedError('invalid_type', field, `expected ${expected}, got ${got}`)
}

/** The same error, naming `field` instead (for an item of a batch). */
function renamed(e, field) {
  const old = e.field
  e.message = e.message.startsWith(`${old}: `) ? field + e.message.slice(old.length) : `${field}: ${e.message}`
  e.field = field
  return e
}

module.exports = { typedError, invalidType, renamed }
