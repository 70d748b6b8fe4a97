#!/usr/bin/env bash
# Install (or update, or roll back) the table controller on a Raspberry Pi (Raspberry Pi OS Bookworm).
#
#   sudo hardware/pi/install.sh                      install this checkout, or update to it
#   sudo hardware/pi/install.sh --rollback           back to the release installed before
#   hardware/pi/install.sh --root DIR                stage into DIR (an SD card's root, or a test)
#
# Each release is a venv of its own under /opt/tablectl/releases/; /opt/tablectl/current points at
# the one that runs and /opt/tablectl/previous at the one before, so an update never touches the
# running files and a rollback is switching back. What is the table's is never overwritten:
# /etc/tablectl/ (config, table profile, command key, broker password: 0600, the service user's)
# and the data directory (journal, outbox, decks, calibration), which must survive a read-only
# root and a power cut: a tmpfs or overlay there is refused. docs/deploy.md walks through it all.
set -euo pipefail

usage() {
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    echo "options: --root DIR  --src DIR  --table-profile FILE  --data DIR  --python PY  --keep N  --rollback"
}

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
ROOT=""
PROFILE="$SRC/hardware/tables/demo-10.toml"
DATA=/var/lib/tablectl
PYTHON=python3
KEEP=3
ROLLBACK=0
USER_NAME=tablectl
GROUPS_WANTED=(spi gpio dialout video)

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT="$(realpath -m "$2")"; shift 2 ;;
        --src) SRC="$(realpath "$2")"; shift 2 ;;
        --table-profile) PROFILE="$(realpath "$2")"; shift 2 ;;
        --data) DATA="$2"; shift 2 ;;
        --python) PYTHON="$2"; shift 2 ;;
        --keep) KEEP="$2"; shift 2 ;;
        --rollback) ROLLBACK=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ "${ROOT}" = "/" ] && ROOT=""

say() { echo "tablectl install: $*"; }
die() { echo "tablectl install: error: $*" >&2; exit 1; }
live() { [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; }

OPT="$ROOT/opt/tablectl"
ETC="$ROOT/etc/tablectl"

restart() {
    if live; then
        systemctl daemon-reload
        systemctl enable tablectl.service >/dev/null
        systemctl restart tablectl.service
        say "tablectl.service restarted: journalctl -u tablectl -f"
    else
        say "not restarted (staged under ${ROOT:-/} or no systemd): systemctl restart tablectl"
    fi
}

if [ "$ROLLBACK" = 1 ]; then
    [ -L "$OPT/previous" ] || die "no previous release to roll back to in $OPT"
    current="$(readlink "$OPT/current")"
    previous="$(readlink "$OPT/previous")"
    ln -sfn "$previous" "$OPT/current.new" && mv -T "$OPT/current.new" "$OPT/current"
    ln -sfn "$current" "$OPT/previous.new" && mv -T "$OPT/previous.new" "$OPT/previous"
    say "rolled back: current -> $previous (previous -> $current)"
    restart
    exit 0
fi

# -- checks first: nothing is changed if one fails ----------------------------------------------
[ -f "$SRC/pyproject.toml" ] || die "$SRC is not the source checkout (no pyproject.toml): give --src"
[ -f "$PROFILE" ] || die "table profile $PROFILE does not exist: give --table-profile"
[ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ] && die "run as root (sudo), or stage with --root DIR"
case "$DATA" in /*) ;; *) die "--data must be an absolute path, not $DATA" ;; esac
probe="$ROOT$DATA"
while [ ! -e "$probe" ]; do probe="$(dirname "$probe")"; done
fstype="$(stat -f -c %T "$probe")"
case "$fstype" in
    tmpfs|ramfs|overlayfs|overlay|squashfs)
        die "$DATA is on $fstype: the journal and outbox would not survive a power cut or a read-only root; \
mount a persistent partition there (docs/deploy.md)" ;;
esac
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$PYTHON is older than Python 3.11"

version="$("$PYTHON" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' \
    "$SRC/pyproject.toml")"
release="$version-$(date -u +%Y%m%dT%H%M%SZ)"
VENV="$OPT/releases/$release"

# -- the release: a venv with the package and its [pi] extra ---------------------------------------
say "installing $release into $VENV"
mkdir -p "$OPT/releases"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$SRC[pi]" || { rm -rf "$VENV"; die "pip failed"; }
"$VENV/bin/tablectl" --version >/dev/null || { rm -rf "$VENV"; die "the new release does not run"; }
"$VENV/bin/tablectl" wiring "$PROFILE" --out "$VENV/share/wiring" >/dev/null \
    || { rm -rf "$VENV"; die "the table profile $PROFILE is not valid (above)"; }
mkdir -p "$VENV/share/doc" && cp "$SRC/docs/deploy.md" "$VENV/share/doc/deploy.md"

# -- the service user and its groups ------------------------------------------------------------
prefix=()
[ -n "$ROOT" ] && prefix=(--prefix "$ROOT")
mkdir -p "$ROOT/etc"
touch "$ROOT/etc/passwd" "$ROOT/etc/group" "$ROOT/etc/shadow" "$ROOT/etc/gshadow"
for group in "${GROUPS_WANTED[@]}"; do
    grep -q "^$group:" "$ROOT/etc/group" || groupadd "${prefix[@]}" --system "$group"
done
if ! grep -q "^$USER_NAME:" "$ROOT/etc/passwd"; then
    useradd "${prefix[@]}" --system --user-group --no-create-home --home-dir "$DATA" \
        --shell /usr/sbin/nologin --comment "poker table controller" "$USER_NAME"
fi
usermod "${prefix[@]}" --append --groups "$(IFS=,; echo "${GROUPS_WANTED[*]}")" "$USER_NAME"
uid="$(awk -F: -v u="$USER_NAME" '$1 == u {print $3}' "$ROOT/etc/passwd")"
gid="$(awk -F: -v u="$USER_NAME" '$1 == u {print $4}' "$ROOT/etc/passwd")"

# -- /etc/tablectl: the table's own files, written once, never overwritten -------------------------
install -d -m 0700 -o "$uid" -g "$gid" "$ETC"
secret() {   # secret FILE: a random secret, 0600, the service user's
    [ -e "$1" ] || "$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$1"
    chown "$uid:$gid" "$1" && chmod 0600 "$1"
}
[ -e "$ETC/table.toml" ] || sed "s#/var/lib/tablectl/#$DATA/#" "$SRC/hardware/mosquitto/table.example.toml" \
    > "$ETC/table.toml"
[ -e "$ETC/table-profile.toml" ] || cp "$PROFILE" "$ETC/table-profile.toml"
secret "$ETC/command-key"      # shared with the hall (its command signer): copy it there
secret "$ETC/mqtt-password"    # this table's broker account: mosquitto_passwd on the hall's broker
cameras="$("$VENV/bin/python" -c 'import sys, tomllib
cams = tomllib.load(open(sys.argv[1], "rb")).get("cameras", [])
print(" ".join("--camera %s=%d" % (c["name"], c["index"]) for c in cams))' "$PROFILE")"
devices="--devices /etc/tablectl/table-profile.toml --decks $DATA/decks --calibration $DATA/calibration"
[ -e "$ETC/devices.env" ] || cat > "$ETC/devices.env" <<EOF
# tablectl run's device options (tablectl run --help); the shoe's port comes from the table profile.
TABLECTL_DEVICES=$devices
# Once the cameras are calibrated (docs/deploy.md, step 4), count the chips too: use this line instead.
#TABLECTL_DEVICES=$devices $cameras
EOF
for f in table.toml table-profile.toml devices.env; do chown "$uid:$gid" "$ETC/$f"; chmod 0600 "$ETC/$f"; done

# -- the data directory: journal, outbox, decks, camera calibration ------------------------------
install -d -m 0750 -o "$uid" -g "$gid" "$ROOT$DATA" "$ROOT$DATA/decks" "$ROOT$DATA/calibration"

# -- udev (the shoe), the SPI overlay, the unit -------------------------------------------------
name="$(basename "$(ls "$VENV"/share/wiring/*-shoe.rules)" -shoe.rules)"
install -D -m 0644 "$VENV/share/wiring/$name-shoe.rules" "$ROOT/etc/udev/rules.d/99-tablectl-shoe.rules"
if command -v dtc >/dev/null 2>&1 && [ -d "$ROOT/boot/firmware/overlays" ]; then
    dtc -q -@ -I dts -O dtb -o "$ROOT/boot/firmware/overlays/tablectl-spi0-cs.dtbo" \
        "$VENV/share/wiring/$name-spi0-cs.dts"
    if ! grep -q '^dtoverlay=tablectl-spi0-cs' "$ROOT/boot/firmware/config.txt" 2>/dev/null; then
        printf '\n# tablectl: the zone readers on SPI0 with their chip selects\ndtoverlay=tablectl-spi0-cs\n' \
            >> "$ROOT/boot/firmware/config.txt"
        say "SPI overlay added to /boot/firmware/config.txt: reboot once"
    fi
else
    say "SPI overlay not installed (no dtc or no /boot/firmware/overlays): docs/deploy.md, step 3"
fi
install -D -m 0644 "$SRC/hardware/pi/tablectl.service" "$ROOT/etc/systemd/system/tablectl.service"
if [ -z "$ROOT" ] && command -v udevadm >/dev/null 2>&1; then udevadm control --reload || true; fi

# -- switch: current -> the new release, previous -> the one it replaces --------------------------
if [ -L "$OPT/current" ]; then
    ln -sfn "$(readlink "$OPT/current")" "$OPT/previous.new" && mv -T "$OPT/previous.new" "$OPT/previous"
fi
ln -sfn "releases/$release" "$OPT/current.new" && mv -T "$OPT/current.new" "$OPT/current"
say "current -> releases/$release"

# -- keep the last $KEEP releases (never current or previous) -----------------------------------
keep=("$(readlink "$OPT/current")" "$(readlink "$OPT/previous" 2>/dev/null || true)")
mapfile -t old < <(ls -1d "$OPT"/releases/* | sort | head -n "-$KEEP")
for dir in "${old[@]}"; do
    rel="releases/$(basename "$dir")"
    [[ " ${keep[*]} " == *" $rel "* ]] || rm -rf "$dir"
done

restart
say "done. Check it: sudo -u $USER_NAME /opt/tablectl/current/bin/tablectl doctor --config /etc/tablectl/table.toml"
