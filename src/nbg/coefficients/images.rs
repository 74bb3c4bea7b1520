//! Coefficient entries a shader reads as an image: the weights, biases and constants of
//! operations that run on the shader (SH) engine, typed and shaped by what the file itself
//! says, without the source model.
//!
//! A shader operation's state buffer writes an 8-word block of `VIVS_SH_HALTI5_UNIFORMS` per
//! tensor it reads, and a patch puts the entry's address into the block's first word
//! (`patch_targets::uniform_reads`). The block is the vendor's image descriptor, written for a
//! tensor by its OpenVX driver (flycat0101/gpu-viv6-andy: `gcfVX_GetImageInfoFromTensor` in
//! `libOpenVX/kernels/gc_vxk_common.c` at 0a184d99, `gcoHARDWAREVX_SetImageInfo` in
//! `hal/user/arch/gc_hal_user_hardware_vx.c` at 002e98f3; its fields are the `VSC_ImageDesc`
//! union of `libVSC/include/drvi/gc_vsc_drvi_interface.h` at 0097dbca):
//!
//! | word | holds |
//! | --- | --- |
//! | 0 | the address (patched) |
//! | 1 | row pitch, bytes |
//! | 2 | width (bits 0-15), height (bits 16-31) |
//! | 3 | the hardware's image word: bits 0-2 log2 of the element's bytes, bits 6-9 the element format (0 F32, 1 F16, 2 S32, 3 S16, 4 S8, 5 U32, 6 U16, 7 U8, 8 BF16), the rest addressing, tiling and swizzle |
//! | 4 | slice pitch, bytes |
//! | 5 | depth |
//! | 6 | an OpenCL `cl_image_format`: channel order (bits 0-15, `CL_R`), channel data type (bits 16-31) |
//! | 7 | zero |
//!
//! The channel codes are Khronos OpenCL's (`cl.h`: `CL_R` 0x10B0, `CL_SIGNED_INT8` 0x10D7 to
//! `CL_FLOAT` 0x10DE). The element type is word 3's format, as the hardware reads it: the driver
//! maps every 8-bit tensor to `CL_UNSIGNED_INT8` in word 6, so only word 3 tells int8 from
//! uint8. Each descriptor is checked against itself and its entry: word 3's size, word 6's type
//! and the format agree, a row holds `width` elements, a slice `height` rows, and the image ends
//! inside the entry. A pixel holds word 3's size over the format's of elements (the fp32
//! TIM-VX sample's shaders read four float32 a pixel). Measured on every such block of the public
//! files and the serializer controls (fp16, int16, uint8, int8, float32 and int32 tensors).
//! The elements are read in (depth, height, width, component) order, as the pitches lay them
//! out.

use super::{CutCode, Operation};
use crate::nbg::parse::patch_targets::UniformRead;
use serde::Serialize;

/// `CL_R`: one channel per element.
const CL_R: u16 = 0x10b0;

/// An element's type, as the descriptor's word 3 names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementType {
    /// Format 0.
    F32,
    /// Format 1.
    F16,
    /// Format 2.
    I32,
    /// Format 3.
    I16,
    /// Format 4.
    I8,
    /// Format 5.
    U32,
    /// Format 6.
    U16,
    /// Format 7.
    U8,
    /// Format 8.
    BF16,
}

impl ElementType {
    /// The type of word 3's format (bits 6-9); `None` for the normalized and packed image
    /// formats, which no tensor uses.
    pub fn of_format(code: u32) -> Option<ElementType> {
        Some(match code {
            0 => ElementType::F32,
            1 => ElementType::F16,
            2 => ElementType::I32,
            3 => ElementType::I16,
            4 => ElementType::I8,
            5 => ElementType::U32,
            6 => ElementType::U16,
            7 => ElementType::U8,
            8 => ElementType::BF16,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            ElementType::I8 | ElementType::U8 => 1,
            ElementType::I16 | ElementType::U16 | ElementType::F16 | ElementType::BF16 => 2,
            ElementType::I32 | ElementType::U32 | ElementType::F32 => 4,
        }
    }
}

/// Bytes per element of a Khronos `cl_channel_type` (`None` for the normalized and packed
/// types).
fn channel_type_bytes(t: u16) -> Option<u64> {
    match t {
        0x10d7 | 0x10da => Some(1),
        0x10d8 | 0x10db | 0x10dd => Some(2),
        0x10d9 | 0x10dc | 0x10de => Some(4),
        _ => None,
    }
}

/// The eight uniform words, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Descriptor {
    /// Word 1: bytes from one row to the next.
    pub row_pitch: u32,
    /// Word 2, bits 0-15.
    pub width: u32,
    /// Word 2, bits 16-31.
    pub height: u32,
    /// Word 3: the hardware's image word (element size and format, addressing, swizzle).
    pub config: u32,
    /// Word 4: bytes from one slice to the next.
    pub slice_pitch: u32,
    /// Word 5.
    pub depth: u32,
    /// Word 6, bits 0-15: `cl_channel_order`.
    pub channel_order: u16,
    /// Word 6, bits 16-31: `cl_channel_type`.
    pub channel_type: u16,
    /// Word 7.
    pub word7: u32,
}

impl Descriptor {
    /// The descriptor words 1 to 7 give; `None` when the state buffer leaves one unwritten.
    pub fn read(words: &[Option<u32>; 8]) -> Option<Descriptor> {
        let w = |i: usize| words[i];
        Some(Descriptor {
            row_pitch: w(1)?,
            width: w(2)? & 0xffff,
            height: w(2)? >> 16,
            config: w(3)?,
            slice_pitch: w(4)?,
            depth: w(5)?,
            channel_order: (w(6)? & 0xffff) as u16,
            channel_type: (w(6)? >> 16) as u16,
            word7: w(7)?,
        })
    }

    /// The element type and the bytes from the entry's start to the end of its last element,
    /// checked: one channel of a known type, non-zero dimensions, rows that hold `width`
    /// elements and slices that hold `height` rows.
    fn extent(&self) -> Result<(ElementType, u64), CutCode> {
        let t = self.element_type().ok_or(CutCode::CoefImageFormat)?;
        let c = self.components();
        let (w, h, d) = (
            u64::from(self.width),
            u64::from(self.height),
            u64::from(self.depth),
        );
        let (row, slice) = (u64::from(self.row_pitch), u64::from(self.slice_pitch));
        let pixel = c * t.bytes();
        if w == 0 || h == 0 || d == 0 || row < w * pixel || (d > 1 && slice < row * h) {
            return Err(CutCode::CoefImageGeometry);
        }
        let end = slice
            .saturating_mul(d - 1)
            .saturating_add(row.saturating_mul(h - 1))
            .saturating_add(w * pixel);
        Ok((t, end))
    }

    /// The element type, when the descriptor is consistent: word 3's format, a pixel (word 3's
    /// size, without the multiply bit) of whole elements, and word 6, where written (the
    /// vendor's VX shaders only), one channel of the same size.
    pub fn element_type(&self) -> Option<ElementType> {
        let t = ElementType::of_format((self.config >> 6) & 0xf)?;
        let pixel = 1u64 << (self.config & 7);
        let cl = (self.channel_order, self.channel_type) == (0, 0)
            || (self.channel_order == CL_R
                && pixel == t.bytes()
                && channel_type_bytes(self.channel_type) == Some(t.bytes()));
        (cl && self.config & 8 == 0 && pixel % t.bytes() == 0).then_some(t)
    }

    /// Elements per pixel: word 3's pixel size over the element's (the fp32 TIM-VX sample's
    /// shaders read four float32 a pixel; the component count field is not the size: the
    /// vendor's 32-bit images set it to four for one element).
    pub fn components(&self) -> u64 {
        let bytes = self.element_type().map_or(1, ElementType::bytes);
        (1u64 << (self.config & 7)) / bytes
    }
}

/// One operation that reads an image, and the uniform its descriptor starts at.
#[derive(Clone, Debug, Serialize)]
pub struct Reader {
    /// The operation and its layer.
    pub operation: Option<Operation>,
    /// `VIVS_SH_HALTI5_UNIFORMS[uniform]`.
    pub uniform: u32,
}

/// A coefficient entry decoded as the image its readers describe.
#[derive(Clone, Debug, Serialize)]
pub struct Image {
    /// Its coefficient-table entry.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The operations that read it, in record order.
    pub readers: Vec<Reader>,
    /// The descriptor (every reader's is the same).
    pub descriptor: Descriptor,
    /// The element type.
    pub dtype: ElementType,
    /// Depth, height, width, and elements per pixel.
    pub shape: [u64; 4],
    /// Bytes from the image's end to the entry's end.
    pub tail_bytes: u64,
    /// Whether every byte no element holds (row and slice padding, the tail) is zero.
    pub padding_zero: bool,
    /// The elements, little-endian, in (depth, height, width) order.
    #[serde(skip)]
    pub elements: Vec<u8>,
}

impl Image {
    /// The name its elements go by: its first reader's layer, operation and uniform, and the
    /// entry (`layer3.ConvolutionLayer.op18.u8.entry2`).
    pub fn name(&self) -> String {
        let by = self.readers.first().map_or("no-reader".to_string(), |r| {
            let op = r
                .operation
                .as_ref()
                .map_or("no-operation".to_string(), |o| {
                    format!("layer{}.{}.op{}", o.layer, o.layer_name, o.index)
                });
            format!("{op}.u{}", r.uniform)
        });
        format!("{by}.entry{}", self.entry)
    }

    /// The entry's bytes written again from the elements (zeros where no element is): the
    /// stored bytes when `padding_zero`.
    pub fn rewritten(&self) -> Vec<u8> {
        let mut out = vec![0u8; usize::try_from(self.size).unwrap_or(0)];
        let d = &self.descriptor;
        let row = (u64::from(d.width) * d.components() * self.dtype.bytes()) as usize;
        let mut rows = self.elements.chunks_exact(row.max(1));
        for z in 0..u64::from(d.depth) {
            for y in 0..u64::from(d.height) {
                let at = (z * u64::from(d.slice_pitch) + y * u64::from(d.row_pitch)) as usize;
                if let Some(r) = rows.next() {
                    out[at..at + row].copy_from_slice(r);
                }
            }
        }
        out
    }
}

/// The image `reads` (every reader of one entry) describe in `bytes`, the entry at file
/// offset `offset`; why not, as a code and the byte of the entry where it showed.
pub fn read(
    entry: usize,
    offset: u64,
    bytes: &[u8],
    reads: &[(&UniformRead, Option<Operation>)],
) -> Result<Image, (CutCode, u64)> {
    let size = bytes.len() as u64;
    let descriptors: Vec<Descriptor> = reads
        .iter()
        .filter_map(|(r, _)| Descriptor::read(&r.words))
        .collect();
    // A reader that writes the address alone, or an empty image after it, passes a pointer
    // (a kernel's scalar or buffer argument): the file gives no layout.
    let Some(&d) = descriptors.first().filter(|d| d.width > 0 && d.height > 0) else {
        return Err((CutCode::CoefNoLayout, 0));
    };
    if descriptors.len() != reads.len() || descriptors.iter().any(|x| !same_image(x, &d)) {
        return Err((CutCode::CoefImageReadersDisagree, 0));
    }
    let (dtype, extent) = d.extent().map_err(|c| (c, 0))?;
    if extent > size {
        return Err((CutCode::CoefImageOutOfBounds, size));
    }
    let row = (u64::from(d.width) * d.components() * dtype.bytes()) as usize;
    // Bounded: the image ends inside the entry, so its elements fit in the entry's size.
    let mut elements = Vec::with_capacity(usize::try_from(extent).unwrap_or(0));
    for z in 0..u64::from(d.depth) {
        for y in 0..u64::from(d.height) {
            let at = (z * u64::from(d.slice_pitch) + y * u64::from(d.row_pitch)) as usize;
            elements.extend_from_slice(&bytes[at..at + row]);
        }
    }
    let mut image = Image {
        entry,
        offset,
        size,
        readers: reads
            .iter()
            .map(|(r, o)| Reader {
                operation: o.clone(),
                uniform: r.uniform,
            })
            .collect(),
        descriptor: d,
        dtype,
        shape: [
            u64::from(d.depth),
            u64::from(d.height),
            u64::from(d.width),
            d.components(),
        ],
        tail_bytes: size - extent,
        padding_zero: false,
        elements,
    };
    image.padding_zero = image.rewritten() == bytes;
    Ok(image)
}

/// Whether two descriptors describe the same image (the configuration word may differ between
/// readers: it is a reader's, not the image's).
fn same_image(a: &Descriptor, b: &Descriptor) -> bool {
    Descriptor { config: 0, ..*a } == Descriptor { config: 0, ..*b }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(words: [u32; 8]) -> UniformRead {
        UniformRead {
            operation: 0,
            entry: 0,
            uniform: 8,
            words: words.map(Some),
        }
    }

    #[test]
    fn a_dense_fp16_image_reads_back_and_rewrites_its_bytes() {
        let bytes: Vec<u8> = (0..24u8).collect();
        let r = reads([0, 6, 3 | 4 << 16, 0x44405041, 24, 1, 0x10dd_10b0, 0]);
        let i = read(3, 100, &bytes, &[(&r, None)]).unwrap();
        assert_eq!(
            (i.dtype, i.shape, i.tail_bytes),
            (ElementType::F16, [1, 4, 3, 1], 0)
        );
        assert!(i.padding_zero);
        assert_eq!(i.elements, bytes);
        assert_eq!(i.rewritten(), bytes);
    }

    #[test]
    fn a_float32_bias_is_one_element_a_pixel() {
        // The A733 fp16 builds' biases: 32-bit, component count field 0 (four), CL_R.
        let bytes: Vec<u8> = (0..16u8).collect();
        let r = reads([0, 16, 4 | 1 << 16, 0x32100002, 16, 1, 0x10de_10b0, 0]);
        let i = read(0, 0, &bytes, &[(&r, None)]).unwrap();
        assert_eq!((i.dtype, i.shape), (ElementType::F32, [1, 1, 4, 1]));
    }

    #[test]
    fn four_float_pixels_without_an_opencl_format() {
        // The fp32 TIM-VX sample's weights: 2 pixels of four float32 (shift 4, four
        // components, swizzle XYZW), word 6 unwritten.
        let bytes: Vec<u8> = (0..32u8).collect();
        let r = reads([0, 32, 2 | 1 << 16, 0x32100034, 32, 1, 0, 0]);
        let i = read(0, 0, &bytes, &[(&r, None)]).unwrap();
        assert_eq!((i.dtype, i.shape), (ElementType::F32, [1, 1, 2, 4]));
        assert_eq!(i.rewritten(), bytes);
    }

    #[test]
    fn row_padding_is_skipped_and_must_be_zero_to_rewrite() {
        // Two rows of 2 u8 in a pitch of 4, then 4 tail bytes.
        let mut bytes = vec![1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0];
        let r = reads([0, 4, 2 | 2 << 16, 0x444051c0, 8, 1, 0x10da_10b0, 0]);
        let i = read(0, 0, &bytes, &[(&r, None)]).unwrap();
        assert_eq!(i.elements, [1, 2, 3, 4]);
        assert_eq!((i.tail_bytes, i.padding_zero), (6, true));
        bytes[2] = 9;
        assert!(!read(0, 0, &bytes, &[(&r, None)]).unwrap().padding_zero);
    }

    #[test]
    fn bad_descriptors_are_refused_with_a_code() {
        let bytes = [0u8; 16];
        let code = |w: [u32; 8]| read(0, 0, &bytes, &[(&reads(w), None)]).unwrap_err().0;
        const U8: u32 = 0x444041c0;
        // An RGBA order, a normalized type, a format no tensor uses, sizes that disagree.
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8, 4, 1, 0x10da_10b5, 0]),
            CutCode::CoefImageFormat
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8, 4, 1, 0x10d2_10b0, 0]),
            CutCode::CoefImageFormat
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, 0x3c0, 4, 1, 0x10da_10b0, 0]),
            CutCode::CoefImageFormat
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8 | 1, 4, 1, 0x10da_10b0, 0]),
            CutCode::CoefImageFormat
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8 | 8, 4, 1, 0x10da_10b0, 0]),
            CutCode::CoefImageFormat
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8, 4, 1, 0x10dd_10b0, 0]),
            CutCode::CoefImageFormat
        );
        // A row pitch shorter than a row, a zero depth.
        assert_eq!(
            code([0, 2, 4 | 1 << 16, U8, 4, 1, 0x10da_10b0, 0]),
            CutCode::CoefImageGeometry
        );
        assert_eq!(
            code([0, 4, 4 | 1 << 16, U8, 4, 0, 0x10da_10b0, 0]),
            CutCode::CoefImageGeometry
        );
        // Past the entry, even with pitches near the top of their range.
        assert_eq!(
            code([
                0,
                16,
                4 | 1 << 16,
                0x32100002,
                u32::MAX,
                u32::MAX,
                0x10de_10b0,
                0
            ]),
            CutCode::CoefImageOutOfBounds
        );
        // A word the buffer does not write: an address, not an image.
        let mut r = reads([0, 4, 4 | 1 << 16, U8, 4, 1, 0x10da_10b0, 0]);
        r.words[5] = None;
        assert_eq!(
            read(0, 0, &bytes, &[(&r, None)]).unwrap_err().0,
            CutCode::CoefNoLayout
        );
        // Two readers that see different shapes.
        let a = reads([0, 4, 4 | 1 << 16, U8, 4, 1, 0x10da_10b0, 0]);
        let b = reads([0, 2, 2 | 2 << 16, U8, 4, 1, 0x10da_10b0, 0]);
        assert_eq!(
            read(0, 0, &bytes, &[(&a, None), (&b, None)]).unwrap_err().0,
            CutCode::CoefImageReadersDisagree
        );
    }
}
