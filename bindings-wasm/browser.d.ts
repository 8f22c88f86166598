// The page's entry (browser.mjs): the same API as the Node package and index.mjs, so the same
// declarations (the Node package's, copied into pkg/ at build); the default export is the API object.
export * from './pkg/retrypolicy.js'
import * as api from './pkg/retrypolicy.js'
export default api
