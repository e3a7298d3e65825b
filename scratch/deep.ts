import fc from 'fast-check';
let v: unknown = 0; for (let i = 0; i < 5000; i++) v = [v];
try { fc.stringify(v); console.log('stringify ok'); } catch (e) { console.log('stringify', (e as Error).message); }
try { JSON.stringify(v); console.log('JSON ok'); } catch (e) { console.log('JSON', (e as Error).message); }
const arb = fc.subarray([['a', v] as const]);
try { fc.sample(arb, 3); console.log('sample ok'); } catch (e) { console.log('sample', (e as Error).message); }
try { fc.assert(fc.property(arb, () => { throw new Error('x'); }), {numRuns: 3}); } catch (e) { console.log('assert', (e as Error).message.slice(0,100)); }
