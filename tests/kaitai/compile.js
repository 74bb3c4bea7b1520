// Compile a .ksy to Python with the npm kaitai-struct-compiler (the Scala.js build, run by node).
// Usage: node compile.js NODE_MODULES_DIR FILE.ksy OUT_DIR
const path = require('path');
const fs = require('fs');
const [modules, ksy, outDir] = process.argv.slice(2);
const KSC = require(path.resolve(modules, 'kaitai-struct-compiler'));
const yaml = require(path.resolve(modules, 'js-yaml'));
const spec = yaml.load(fs.readFileSync(ksy, 'utf8'));
KSC.compile('python', spec, null, false)
  .then((files) => {
    for (const name of Object.keys(files)) {
      fs.writeFileSync(path.join(outDir, name), files[name]);
    }
  })
  .catch((e) => {
    console.error(String(e));
    process.exit(1);
  });
