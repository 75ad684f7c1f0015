#!/usr/bin/env bash
# Installs the real Paimon implementations the interop tests drive, idempotently and quietly:
#   - pypaimon (python/requirements.txt, every version pinned) in .venv at the repository root,
#     and each older pypaimon line named in LAKESTATE_PYPAIMON_LINES in interop/.venvs/pypaimon-LINE
#     (python/requirements-pypaimon-LINE.txt);
#   - Java Paimon, for each version in LAKESTATE_PAIMON_JAVA_VERSIONS: its class path (resolved
#     from java/pom.xml by Maven) and the harness classes, in java/target/paimon-VERSION/.
# A second run with nothing changed does no network access and takes a few seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
java_versions=${LAKESTATE_PAIMON_JAVA_VERSIONS:-"1.4.2 2.0.0"}
pypaimon_lines=${LAKESTATE_PYPAIMON_LINES:-"1.4"}
# MAVEN_REPOSITORY, if set, is the local Maven repository to use instead of ~/.m2/repository.
m2=${MAVEN_REPOSITORY:-$HOME/.m2/repository}

log() { printf 'interop setup: %s\n' "$*" >&2; }

# quiet CMD...: runs a command, showing its output only when it fails.
quiet() {
  local output
  if ! output=$("$@" 2>&1); then
    printf '%s\n' "$output" >&2
    log "failed: $*"
    exit 1
  fi
}

mvn_quiet() { quiet mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$m2" "$@"; }

fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

# make_venv DIR REQUIREMENTS: creates or refreshes a venv when its requirements changed.
make_venv() {
  local dir=$1 requirements=$2 stamp want
  stamp=$1/.interop-requirements
  want=$(fingerprint "$requirements")
  if [[ -x $dir/bin/python && -f $stamp && $(cat "$stamp") == "$want" ]]; then
    return
  fi
  log "installing $(grep -o '^pypaimon==[^ ]*' "$requirements") into ${dir#"$root"/}"
  [[ -x $dir/bin/python ]] || python3 -m venv "$dir"
  quiet "$dir/bin/pip" install -q --disable-pip-version-check --progress-bar off -r "$requirements"
  echo "$want" >"$stamp"
}

# paimon_jar_for VERSION: prints the -D option that names the Paimon jar, if the version's
# paimon-bundle is not on Maven Central. For 2.0.x Maven Central serves paimon-core but not
# paimon-bundle; the released paimon-flink-2.0 jar embeds the complete 2.0 bundle, unrelocated.
# Its POM's parent is not served either, so the jar is fetched alone (plugin 2.8 resolves
# non-transitive artifacts without reading their POM).
paimon_jar_for() {
  local v=$1 jar
  case $v in
    2.0.*)
      jar=$m2/org/apache/paimon/paimon-flink-2.0/$v/paimon-flink-2.0-$v.jar
      if [[ ! -f $jar ]]; then
        mvn_quiet org.apache.maven.plugins:maven-dependency-plugin:2.8:get \
          -Dartifact="org.apache.paimon:paimon-flink-2.0:$v" -Dtransitive=false
      fi
      echo "-Dpaimon.jar=$jar"
      ;;
  esac
}

build_java() {
  local v=$1 out=$here/java/target/paimon-$1 sources want jar_option
  mapfile -t sources < <(find "$here/java/src/main/java" -name '*.java' | sort)
  want=$(fingerprint "$here/setup.sh" "$here/java/pom.xml" "${sources[@]}")
  if [[ -f $out/classes/.interop-sources && $(cat "$out/classes/.interop-sources") == "$want" ]]; then
    return
  fi
  log "building the Java harness against Paimon $v"
  mkdir -p "$out"
  jar_option=$(paimon_jar_for "$v")
  # shellcheck disable=SC2086 # the optional -D option is one word or none
  mvn_quiet -f "$here/java/pom.xml" dependency:build-classpath \
    -Dpaimon.version="$v" $jar_option -Dmdep.outputFile="$out/classpath.txt"
  rm -rf "$out/classes"
  javac -nowarn -encoding UTF-8 -d "$out/classes" -cp "$(cat "$out/classpath.txt")" "${sources[@]}" 2>&1 |
    grep -v -e '^Note: ' -e 'bad path element' >&2 || true
  [[ -f $out/classes/org/lakestate/interop/Main.class ]] || { log "javac failed for Paimon $v"; exit 1; }
  # The harness as a jar, and a class-data-sharing archive of the classes a write (with its
  # compactions) loads: a JVM that maps it starts in about half the CPU time. Class-data sharing
  # needs a class path of jars only. Without the archive the harness runs as well, only slower.
  rm -f "$out/harness.jar" "$out/paimon.jsa"
  jar cf "$out/harness.jar" -C "$out/classes" .
  local train
  train=$(mktemp -d)
  if ! java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m -XX:ArchiveClassesAtExit="$out/paimon.jsa" \
    -Xlog:all=off -Dlog4j.configuration="file:$here/java/log4j.properties" \
    -cp "$out/harness.jar:$(cat "$out/classpath.txt")" org.lakestate.interop.Main \
    write "$train/table" "$here/testdata/java-write/types-dv.json" >/dev/null 2>&1; then
    rm -f "$out/paimon.jsa"
    log "no class-data-sharing archive for Paimon $v; the harness runs without one"
  fi
  rm -rf "$train"
  echo "$want" >"$out/classes/.interop-sources"
}

make_venv "$root/.venv" "$here/python/requirements.txt"
for line in $pypaimon_lines; do
  make_venv "$here/.venvs/pypaimon-$line" "$here/python/requirements-pypaimon-$line.txt"
done
for v in $java_versions; do
  build_java "$v"
done
