// Types of the Node-compatible facade (index.mjs): its API is the Node package's, so these are
// the Node package's own declarations (bindings-node/lib/retrypolicy.d.ts).
export * from '../bindings-node/lib/retrypolicy.js'
import * as retrypolicy from '../bindings-node/lib/retrypolicy.js'
export default retrypolicy
