//! Disk tools that erase a device: `mkfs` (and every `mkfs.TYPE`), `mke2fs`, `mkswap`,
//! `newfs`, `blkdiscard`, `wipefs -a`, `sgdisk -Z`, `sfdisk`/`fdisk`/`gdisk`/`cfdisk` on a
//! device (not listing), `parted mklabel|rm|mkpart…`, `hdparm --security-erase…`,
//! `cryptsetup luksFormat|erase`, `diskutil erase…`, `zpool destroy|labelclear`,
//! `lvremove`/`vgremove`/`pvremove`. Each is an `overwrites class=device` effect on the last
//! `/dev/…` it names (`?` when it names none).

use super::row::Row;
use crate::shell::model::effect::{Effect, EffectKind};
use crate::shell::model::paths::Class;
use crate::shell::model::walk::Call;

/// Makes a file system or swap, or discards blocks: erases unless asking for help.
pub(super) const MAKE: Row = Row {
    effects: Some(|_, c, fx| erase(c, fx, |a| !a.help())),
    ..Row::PLAIN
};
pub(super) const WIPEFS: Row = Row {
    effects: Some(|_, c, fx| erase(c, fx, |a| a.short('a') || a.short('o') || a.has("--all"))),
    ..Row::PLAIN
};
pub(super) const SGDISK: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            ['Z', 'z', 'o', 'd'].into_iter().any(|c| a.short(c))
                || a.has("--zap-all")
                || a.has("--zap")
                || a.has("--clear")
        });
    }),
    ..Row::PLAIN
};
pub(super) const SFDISK: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            !a.help()
                && !a.short('l')
                && !a.has("--list")
                && !a.short('d')
                && !a.has("--dump")
                && a.device() != "?"
        });
    }),
    ..Row::PLAIN
};
/// `fdisk`, `gdisk`, `cfdisk`: interactive partitioners, on a device and not listing.
pub(super) const FDISK: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            !a.help() && !a.short('l') && !a.has("--list") && a.device() != "?"
        });
    }),
    ..Row::PLAIN
};
pub(super) const PARTED: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            a.0.iter().any(|w| {
                matches!(
                    w.as_str(),
                    "mklabel" | "rm" | "mkpart" | "resizepart" | "mktable"
                )
            })
        });
    }),
    ..Row::PLAIN
};
pub(super) const HDPARM: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            a.0.iter().any(|w| {
                w.starts_with("--security-erase")
                    || w == "--trim-sector-ranges"
                    || w == "--write-sector"
            })
        });
    }),
    ..Row::PLAIN
};
pub(super) const CRYPTSETUP: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            a.0.iter()
                .any(|w| matches!(w.as_str(), "luksFormat" | "erase" | "luksErase"))
        });
    }),
    ..Row::PLAIN
};
pub(super) const DISKUTIL: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            a.0.first().is_some_and(|w| {
                w.starts_with("erase")
                    || w.starts_with("zero")
                    || w.starts_with("random")
                    || w == "partitionDisk"
                    || w == "secureErase"
            })
        });
    }),
    ..Row::PLAIN
};
pub(super) const ZPOOL: Row = Row {
    effects: Some(|_, c, fx| {
        erase(c, fx, |a| {
            a.0.first()
                .is_some_and(|w| w == "destroy" || w == "labelclear")
        });
    }),
    ..Row::PLAIN
};
/// `lvremove`, `vgremove`, `pvremove`: unless asking for help.
pub(super) const LVM_REMOVE: Row = MAKE;

/// A disk tool's arguments, with the questions its rows ask of them.
struct Args<'a>(&'a [String]);

impl Args<'_> {
    fn has(&self, flag: &str) -> bool {
        self.0.iter().any(|a| a == flag)
    }

    /// A short option `c` in any cluster (`-Z`, `-qZ`).
    fn short(&self, c: char) -> bool {
        self.0
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    }

    fn help(&self) -> bool {
        self.0.is_empty()
            || self.has("--help")
            || self.has("-h")
            || self.has("-V")
            || self.has("--version")
    }

    /// The last `/dev/…` named, `?` for none.
    fn device(&self) -> String {
        self.0
            .iter()
            .rev()
            .find(|a| a.starts_with("/dev/"))
            .cloned()
            .unwrap_or_else(|| "?".into())
    }
}

/// `overwrites class=device` on the device the call names, when `destroys` says this call
/// erases it.
fn erase(c: &Call<'_>, fx: &mut Vec<Effect>, destroys: fn(&Args<'_>) -> bool) {
    let args = Args(c.args);
    if !destroys(&args) {
        return;
    }
    let (p, device) = (c.program, args.device());
    fx.push(Effect::on_path(
        EffectKind::Overwrites,
        &format!("erases {device} with {p}"),
        &[("via", p)],
        Class::Device,
        &device,
    ));
}

#[cfg(test)]
mod tests {
    use crate::shell::model::{Context, analyse};

    fn erases(cmd: &str) -> Option<String> {
        analyse(cmd, &Context::default())
            .effects
            .into_iter()
            .find(|e| e.line.starts_with("overwrites class=device"))
            .map(|e| e.line)
    }

    #[test]
    fn disk_tools_erase_their_device_and_listing_does_not() {
        for cmd in [
            "mkfs.ext4 /dev/sdb1",
            "mkfs -t xfs /dev/sdb",
            "mkswap /dev/sdc",
            "wipefs -a /dev/sda",
            "sgdisk --zap-all /dev/sda",
            "sgdisk -Z /dev/nvme0n1",
            "sfdisk /dev/sda < layout",
            "fdisk /dev/sda",
            "parted /dev/sda mklabel gpt",
            "hdparm --security-erase p /dev/sda",
            "cryptsetup luksFormat /dev/sdb",
            "diskutil eraseDisk APFS x disk2",
            "zpool destroy tank",
            "lvremove vg/lv",
            "blkdiscard /dev/sdd",
            // Every name starting `mkfs`, as a family.
            "mkfs.anything /dev/sdb",
        ] {
            assert!(erases(cmd).is_some(), "{cmd}");
        }
        assert_eq!(
            erases("wipefs -a /dev/sda").as_deref(),
            Some("overwrites class=device via=wipefs path=/dev/sda")
        );
        assert_eq!(
            erases("zpool destroy tank").as_deref(),
            Some("overwrites class=device via=zpool path=?")
        );
        for cmd in [
            "mkfs --help",
            "mkfs.ext4",
            "wipefs /dev/sda",
            "sgdisk -p /dev/sda",
            "sfdisk -l /dev/sda",
            "sfdisk -d /dev/sda",
            "sfdisk",
            "fdisk -l",
            "fdisk -l /dev/sda",
            "parted /dev/sda print",
            "hdparm -I /dev/sda",
            "cryptsetup open /dev/sdb x",
            "diskutil list",
            "zpool status",
            "lvremove --help",
        ] {
            assert_eq!(erases(cmd), None, "{cmd}");
        }
    }
}
