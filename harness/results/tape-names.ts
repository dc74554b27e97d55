import { callerFileSource } from './caller-file.js';

/**
 * Source of a module preloaded into the test command's node processes (`--require` through
 * NODE_OPTIONS) that puts each tape test's file into its name, since TAP names no files: a test
 * `adds` in test/a.js prints as `# test/a.js::adds`, a subtest `inner` of it as
 * `# test/a.js::adds > inner`, so two files' tests of the same name stay apart. It waits for tape
 * itself to load its Test class (tape/index.js requiring ./lib/test) and hands it a subclass that
 * names each top-level test after the file whose call made it (the first frame of the stack
 * outside tape); any other process (npx, a TAP producer that is not tape) is left as it is.
 */
export function tapeNamesSource(): string {
  return `'use strict';
const Module = require('node:module');
const path = require('node:path');
const { fileURLToPath } = require('node:url');
const TAPE_INDEX = /[\\\\/]tape[\\\\/]index\\.js$/;

${callerFileSource('tape')}

function nameSubtests(t) {
  t.on('test', (st) => {
    st.name = t.name + ' > ' + st.name;
    nameSubtests(st);
  });
}

function qualified(Tape) {
  function Test(name, opts, cb) {
    if (!(this instanceof Test)) return new Test(name, opts, cb);
    Tape.call(this, name, opts, cb);
    const file = callerFile();
    if (file) this.name = path.relative(process.cwd(), file).split(path.sep).join('/') + '::' + this.name;
    nameSubtests(this);
  }
  Test.prototype = Tape.prototype;
  Object.assign(Test, Tape);
  return Test;
}

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  if (request === './lib/test' && parent && TAPE_INDEX.test(parent.filename || '') && typeof loaded === 'function') {
    Module._load = load;
    return qualified(loaded);
  }
  return loaded;
};
`;
}
