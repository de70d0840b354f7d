"""A small reader for the .BTF section: enough type information to decode BTF-defined maps."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from hxdp.errors import ElfError

BTF_MAGIC = 0xEB9F

# BTF kinds (linux/btf.h).
KIND_INT, KIND_PTR, KIND_ARRAY, KIND_STRUCT, KIND_UNION, KIND_ENUM, KIND_FWD = 1, 2, 3, 4, 5, 6, 7
KIND_TYPEDEF, KIND_VOLATILE, KIND_CONST, KIND_RESTRICT, KIND_FUNC, KIND_FUNC_PROTO = 8, 9, 10, 11, 12, 13
KIND_VAR, KIND_DATASEC, KIND_FLOAT, KIND_DECL_TAG, KIND_TYPE_TAG, KIND_ENUM64 = 14, 15, 16, 17, 18, 19
_MODIFIERS = (KIND_TYPEDEF, KIND_VOLATILE, KIND_CONST, KIND_RESTRICT, KIND_TYPE_TAG)
_SIZED = (KIND_INT, KIND_STRUCT, KIND_UNION, KIND_ENUM, KIND_DATASEC, KIND_FLOAT, KIND_ENUM64)


@dataclass
class BtfType:
    """One BTF type record; `members` holds (name, type id, bit offset) for structs, unions and datasecs."""

    id: int
    kind: int
    name: str
    size_or_type: int
    vlen: int
    nelems: int = 0  # arrays
    elem_type: int = 0  # arrays
    members: list[tuple[str, int, int]] = field(default_factory=list)


class Btf:
    """Parsed .BTF: types by id (id 0 is void) and lookup helpers."""

    def __init__(self, data: bytes, where: str = ".BTF") -> None:
        self.where = where
        if len(data) < 24:
            raise ElfError(f"{where}: BTF header truncated ({len(data)} bytes)")
        magic, version, _flags, hdr_len = struct.unpack_from("<HBBI", data, 0)
        if magic != BTF_MAGIC:
            raise ElfError(f"{where}: bad BTF magic 0x{magic:04x}")
        if version != 1:
            raise ElfError(f"{where}: unsupported BTF version {version}")
        type_off, type_len, str_off, str_len = struct.unpack_from("<IIII", data, 8)
        base = hdr_len
        if base + max(type_off + type_len, str_off + str_len) > len(data):
            raise ElfError(f"{where}: BTF type or string section runs past the end of the section")
        self._strings = data[base + str_off : base + str_off + str_len]
        self.types: list[BtfType | None] = [None]
        self._parse(data[base + type_off : base + type_off + type_len])
        self.vars: dict[str, BtfType] = {t.name: t for t in self.types[1:] if t and t.kind == KIND_VAR}

    def _str(self, off: int) -> str:
        end = self._strings.find(b"\0", off)
        return self._strings[off : end if end >= 0 else len(self._strings)].decode("utf-8", "replace")

    def _parse(self, blob: bytes) -> None:
        try:
            self._parse_types(blob)
        except struct.error:
            raise ElfError(f"{self.where}: BTF type {len(self.types)} truncated") from None

    def _parse_types(self, blob: bytes) -> None:
        pos = 0
        while pos < len(blob):
            if pos + 12 > len(blob):
                raise ElfError(f"{self.where}: BTF type {len(self.types)} truncated")
            name_off, info, size_or_type = struct.unpack_from("<III", blob, pos)
            pos += 12
            kind = (info >> 24) & 0x1F
            vlen = info & 0xFFFF
            t = BtfType(len(self.types), kind, self._str(name_off), size_or_type, vlen)
            if kind in (KIND_INT, KIND_VAR, KIND_DECL_TAG):
                pos += 4
            elif kind == KIND_ARRAY:
                t.elem_type, _index, t.nelems = struct.unpack_from("<III", blob, pos)
                pos += 12
            elif kind in (KIND_STRUCT, KIND_UNION):
                kflag = info >> 31
                for i in range(vlen):
                    m_name, m_type, m_off = struct.unpack_from("<III", blob, pos + 12 * i)
                    t.members.append((self._str(m_name), m_type, m_off & 0xFFFFFF if kflag else m_off))
                pos += 12 * vlen
            elif kind == KIND_DATASEC:
                for i in range(vlen):
                    v_type, v_off, _v_size = struct.unpack_from("<III", blob, pos + 12 * i)
                    t.members.append(("", v_type, v_off * 8))
                pos += 12 * vlen
            elif kind in (KIND_ENUM, KIND_FUNC_PROTO):
                pos += 8 * vlen
            elif kind == KIND_ENUM64:
                pos += 12 * vlen
            elif kind in (KIND_PTR, KIND_FWD, KIND_FUNC, KIND_FLOAT) or kind in _MODIFIERS:
                pass
            else:
                raise ElfError(f"{self.where}: unknown BTF kind {kind} (type {t.id})")
            if pos > len(blob):
                raise ElfError(f"{self.where}: BTF type {t.id} truncated")
            self.types.append(t)

    def get(self, type_id: int) -> BtfType:
        if not 0 < type_id < len(self.types):
            raise ElfError(f"{self.where}: BTF type id {type_id} out of range")
        t = self.types[type_id]
        assert t is not None
        return t

    def skip_mods(self, type_id: int) -> BtfType:
        """The type behind typedefs and const/volatile/restrict qualifiers."""
        for _ in range(64):
            t = self.get(type_id)
            if t.kind not in _MODIFIERS:
                return t
            type_id = t.size_or_type
        raise ElfError(f"{self.where}: BTF modifier chain too long at type {type_id}")

    def size_of(self, type_id: int, depth: int = 0) -> int:
        if depth > 32:
            raise ElfError(f"{self.where}: BTF type {type_id} nests too deeply")
        t = self.skip_mods(type_id)
        if t.kind in _SIZED:
            return t.size_or_type
        if t.kind == KIND_PTR:
            return 8
        if t.kind == KIND_ARRAY:
            return t.nelems * self.size_of(t.elem_type, depth + 1)
        raise ElfError(f"{self.where}: BTF type {t.id} ({t.name or 'anonymous'}, kind {t.kind}) has no size")
