//! The families' claims sorted, every unclaimed byte given a gap owner (alignment, padding or
//! the connection tail), the ledger proved contiguous, and the connection region's view.

use super::*;
use crate::nbg::family::Claim;

/// Sort the claims and give every unclaimed byte an owner: alignment, padding, or the tail.
pub(super) fn fill_gaps(source: &Data<'_>, mut claims: Vec<Claim>) -> Result<Vec<Owner>, Failure> {
    let size = source.len();
    claims.sort_by_key(|c| (c.start, c.end));
    let mut owners: Vec<Owner> = Vec::with_capacity(claims.len() * 2 + 2);
    let mut cursor = 0u64;
    for c in claims {
        if c.start < cursor {
            return fail(
                Code::OwnershipConflict,
                c.start,
                format!(
                    "{} starts inside an earlier owner ending at 0x{cursor:x}",
                    c.label
                ),
            );
        }
        if c.start > cursor {
            let aligned = if c.alignment > 1 {
                cursor.next_multiple_of(c.alignment).min(c.start)
            } else {
                cursor
            };
            if aligned > cursor {
                owners.push(owner(
                    source,
                    cursor,
                    aligned,
                    OwnerClass::Alignment,
                    format!("alignment before {}", c.label),
                ));
            }
            if c.start > aligned {
                owners.push(owner(
                    source,
                    aligned,
                    c.start,
                    OwnerClass::Padding,
                    format!("padding before {}", c.label),
                ));
            }
        }
        cursor = c.end;
        owners.push(Owner {
            start: c.start,
            end: c.end,
            class: c.class,
            label: c.label,
            origin: c.origin,
            all_zero: None,
            undecoded: c.undecoded,
        });
    }
    if cursor < size {
        let tail = size - CONNECTION_REGION_SIZE.min(size);
        if cursor <= tail {
            if tail > cursor {
                owners.push(owner(
                    source,
                    cursor,
                    tail,
                    OwnerClass::Padding,
                    "padding before connection tail".into(),
                ));
            }
            owners.push(Owner {
                start: tail,
                end: size,
                class: OwnerClass::ConnectionTail,
                label: "connection region (final 512 bytes)".into(),
                origin: Origin::Tail,
                all_zero: None,
                undecoded: None,
            });
        } else {
            owners.push(owner(
                source,
                cursor,
                size,
                OwnerClass::Padding,
                "padding before EOF".into(),
            ));
        }
    }
    Ok(owners)
}

pub(super) fn owner(
    source: &Data<'_>,
    start: u64,
    end: u64,
    class: OwnerClass,
    label: String,
) -> Owner {
    let all_zero = (class == OwnerClass::Padding).then(|| {
        source
            .visit(start, end, 1, |_, piece| {
                if piece.iter().all(|&b| b == 0) {
                    Ok(())
                } else {
                    Err(())
                }
            })
            .is_ok()
    });
    Owner {
        start,
        end,
        class,
        label,
        origin: Origin::Gap,
        all_zero,
        undecoded: None,
    }
}

/// Sorted, contiguous, non-empty, from 0 to the file size.
pub(super) fn prove(owners: &[Owner], size: u64) -> Result<(), Failure> {
    let mut cursor = 0;
    for o in owners {
        if o.start != cursor || o.end <= o.start {
            return fail(
                Code::OwnershipConflict,
                o.start.min(cursor),
                format!(
                    "owner {} [0x{:x}, 0x{:x}) breaks contiguity at 0x{cursor:x}",
                    o.label, o.start, o.end
                ),
            );
        }
        cursor = o.end;
    }
    if cursor != size {
        return fail(
            Code::OwnershipConflict,
            cursor,
            format!("owners end at 0x{cursor:x}, file ends at 0x{size:x}"),
        );
    }
    Ok(())
}

/// The final 512 bytes as a view when other owners already hold any of them.
pub(super) fn connection_view(owners: &[Owner], size: u64) -> Option<View> {
    let start = size - CONNECTION_REGION_SIZE.min(size);
    if size == 0 || owners.iter().any(|o| o.class == OwnerClass::ConnectionTail) {
        return None;
    }
    let held: Vec<&str> = owners
        .iter()
        .filter(|o| o.end > start && o.class != OwnerClass::Padding)
        .map(|o| o.label.as_str())
        .collect();
    Some(View {
        start,
        end: size,
        class: ViewClass::SectionCoveredView,
        label: format!(
            "connection region (final 512 bytes) over {}",
            held.join(", ")
        ),
    })
}
