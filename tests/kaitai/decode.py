"""Parse an NBG with the parser kaitai-struct-compiler generated from the exported .ksy and print
the decoded header, directory, I/O records, network info and v1 tables as JSON, under the keys
of `nbg parse --json`, so the test compares them field for field.

Usage: python3 decode.py GENERATED_DIR FILE.nb
"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
from nbg_v1 import NbgV1  # noqa: E402
from nbg_v2 import NbgV2  # noqa: E402


def io(records, dims_field="dimensions"):
    out = []
    for i, r in enumerate(records):
        quant = (
            list(r.quantization_raw_words)
            if hasattr(r, "quantization_raw_words")
            else [
                r.quantization_fixed_point_position & 0xFFFFFFFF,
                r.quantization_scale,
                r.quantization_zero_point & 0xFFFFFFFF,
            ]
        )
        out.append(
            {
                "index": i,
                "name": getattr(r, "name", None),
                "dimension_count": r.dimension_count,
                "dimensions": list(r.dimensions)[: r.dimension_count],
                "data_format": r.data_format,
                "data_type": r.data_type,
                "quantization": {"format": r.quantization_format, "raw_words": quant},
            }
        )
    return out


def layers(t):
    return [
        {"index": i, "name": r.name, "id": r.id, "uid": getattr(r, "uid", 0), "operation_count": r.operation_count}
        for i, r in enumerate(t.records)
    ]


def operations(t):
    out = []
    for i, r in enumerate(t.records):
        out.append(
            {
                "index": i,
                "type": r.type,
                "engine_index": r.index,
                "layer_id": r.layer_id,
                "state_id": r.state_id,
                "patch_index": r.patch_index,
                "patch_count": r.patch_count,
                "preempt": r.preempt_word_preempt,
                "abs_share_id": r.preempt_word_abs_share_id,
                "abs_op_id": getattr(r, "abs_op_id", None),
            }
        )
    return out


def sh(t):
    return [
        {"index": i, "instr_index": r.instr_index, "ppu_param_index": getattr(r, "ppu_param_index", None)}
        for i, r in enumerate(t.records)
    ]


def patches(t):
    return {"count": len(t.records)}


def v2(path):
    g = NbgV2.from_file(path)
    h = g.header
    doc = {
        "header": {
            "version": h.version,
            "target": h.target,
            "crc_sum": h.crc_sum,
            "declared_file_size_low": h.total_size_low,
            "declared_file_size_high": h.total_size_high,
            "sub_header_offset": h.sub_header_offset,
            "sub_header_size": h.sub_header_size,
            "sub_header_count": h.sub_header_count,
            "class": h.class_word_class,
            "reserved": {
                "class_word_reserved_bits": h.class_word_reserved1,
                "reserved2": h.reserved2,
                "reserved3": h.reserved3,
            },
        },
        "sub_header": {
            "section_headers_offset": g.sub_header.section_headers_offset,
            "section_header_size": g.sub_header.section_header_size,
            "section_header_count": g.sub_header.section_header_count,
        },
        "sections": [
            {
                "type": d.type,
                "offset": d.offset,
                "size": d.size,
                "load_address": d.load_address,
                "alignment": d.alignment,
                "entry_size": d.entry_size,
                "reserved_words": list(d.reserved_words),
            }
            for d in g.directory
        ],
    }
    by_type = {d.type: d for d in g.directory}
    doc["inputs"] = io(by_type[1].body.records)
    doc["outputs"] = io(by_type[2].body.records)
    n = by_type[35].body
    doc["network_info"] = {
        "name": n.name,
        "input_count": n.input_count,
        "output_count": n.output_count,
        "layer_count": n.layer_count,
        "absolute_operation_count": n.absolute_operation_count,
        "operation_count": n.operation_count,
        "core_count": n.core_count,
        "address_width": n.address_width,
        "attribute": {
            "raw": n.attribute,
            "change_ppu_param": n.attribute_change_ppu_param == 1,
            "nn_command_size_code": n.attribute_nn_command_size_code,
            "tp_command_size_code": n.attribute_tp_command_size_code,
            "dma_support_code": n.attribute_dma_support_code,
            "reserved_bits": n.attribute_reserved_bits,
        },
    }
    doc["memory_pool_bytes"] = by_type[37].body.used_size if 37 in by_type else None
    doc["vip_sram_bytes"] = by_type[38].body.used_size if 38 in by_type else None
    doc["axi_sram_bytes"] = by_type[39].body.used_size if 39 in by_type else None
    doc["section_checksums"] = (
        [{"section_type": r.section_type, "stored": r.checksum_value} for r in by_type[40].body.records]
        if 40 in by_type
        else []
    )
    doc["dynamic_io"] = (
        [[r.offset, r.size] for r in by_type[26].body.records] if 26 in by_type else None
    )
    doc["layers"] = layers(by_type[3].body) if 3 in by_type else None
    doc["operations"] = operations(by_type[4].body) if 4 in by_type else None
    doc["sh_operations"] = sh(by_type[9].body) if 9 in by_type else None
    doc["patches"] = patches(by_type[10].body) if 10 in by_type else None
    return doc


V1_TABLES = ["layer", "operation", "sh", "patch"]


def v1(path, decodes_records):
    g = NbgV1.from_file(path)
    f = g.fixed
    bits = {
        name[len("feature_database_bits_"):]: getattr(f, name)
        for name in dir(f)
        if name.startswith("feature_database_bits_")
    }
    doc = {
        "header": {
            "version": f.version,
            "target": f.target,
            "network_name": f.network_name,
            "layer_count": f.layer_count,
            "operation_count": f.operation_count,
            "input_count": f.input_count,
            "output_count": f.output_count,
        },
        "feature_database": {
            "raw_bits": f.feature_database_bits,
            "bits": bits,
            "num_pixel_pipes": f.feature_database_num_pixel_pipes,
            "core_count": f.feature_database_core_fields_core_count,
            "device_index": f.feature_database_core_fields_device_index,
            "axi_bus_width_index": f.feature_database_core_fields_axi_bus_width_index,
            "cluster_id_width": f.feature_database_core_fields_cluster_id_width,
            "nn_core_count": f.feature_database_core_fields_nn_core_count,
            "tp_core_count": f.feature_database_core_fields_tp_core_count,
            "nbg_crc_sum": f.nbg_crc_sum,
            "vip_sram_width": f.feature_database_vip_sram_width,
        },
        "memory_pool": dict(zip(["size", "alignment", "base"], f.memory_pool)),
        "axi_sram": dict(zip(["base", "size"], f.axi_sram)),
        "vip_sram": dict(zip(["base", "size"], f.vip_sram)) if getattr(f, "vip_sram", None) is not None else None,
        "tables": [[e.offset, e.size] for e in g.entries],
        "inputs": io(g.input.records),
        "outputs": io(g.output.records),
    }
    nested = {}
    for name in ["lcd_table", "icd_table", "coeff_data_table", "ppu_instr_table", "dyna_io_table", "load_states_table"]:
        t = getattr(g, name, None) if hasattr(g, name) else None
        if t is not None:
            nested[name] = [[r.offset, r.size] for r in t.records]
    doc["nested_tables"] = nested
    if decodes_records:
        doc["layers"] = layers(g.layer)
        doc["operations"] = operations(g.operation)
        doc["sh_operations"] = sh(g.sh)
        doc["patches"] = patches(g.patch)
        # The v1-only tables, where the version has their entry (None otherwise).
        sw_t = getattr(g, "sw", None)
        doc["sw_operations"] = (
            [
                {"index": i, "type": r.sw_operation_type, "name": getattr(r, "name", None)}
                for i, r in enumerate(sw_t.records)
            ]
            if sw_t is not None
            else None
        )
        hw_t = getattr(g, "hw_init", None)
        doc["hw_init_operations"] = (
            [
                {"index": i, "state_id": r.state_id, "patch_index": r.patch_index, "patch_count": r.patch_count}
                for i, r in enumerate(hw_t.records)
            ]
            if hw_t is not None
            else None
        )
        ppu_t = getattr(g, "ppu_param", None)
        doc["ppu_params"] = (
            [
                {
                    "index": i,
                    "global_offset": list(r.global_offset),
                    "global_scale": list(r.global_scale),
                    "group_size": list(r.group_size),
                    "group_count": list(r.group_count),
                }
                for i, r in enumerate(ppu_t.records)
            ]
            if ppu_t is not None
            else None
        )
    return doc


def main():
    path = sys.argv[2]
    with open(path, "rb") as fh:
        head = fh.read(8)
    version = struct.unpack("<I", head[4:8])[0]
    if version >> 16 == 2:
        doc = v2(path)
    else:
        doc = v1(path, sys.argv[3] == "records" if len(sys.argv) > 3 else False)
    print(json.dumps(doc, sort_keys=True))


main()
